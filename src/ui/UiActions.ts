import type { DeadLetterReason } from "../core/copyMetadata.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";

/**
 * The console's actions: POST /ui/actions/<kind>. `task` starts a redrive task (dlq redrive
 * --async), `cancel` cancels one (dlq cancel).
 */
export const UI_ACTIONS = ["redrive", "purge", "reap", "task", "cancel"] as const;
export type UiActionKind = (typeof UI_ACTIONS)[number];

/** Which dead letters: some by id (one row, or the rows ticked), a filter, or all of the group. */
export type DeadLetterSelection =
  | { scope: "ids"; ids: string[] }
  | { scope: "filter"; reason?: DeadLetterReason; olderThanMs?: number }
  | { scope: "all" };

/** What an action did: in words, as one result row, and for the audit event. */
export interface ActionOutcome {
  words: string;
  /** Column name to value, in order. */
  row: Record<string, string | number>;
  /** Entries or consumers acted on. */
  count: number;
  /** The ids (or consumer names) acted on, when known. */
  ids: string[];
  /** The summary the CLI's --json would print. */
  result: Record<string, unknown>;
}

/**
 * What the actions run: the CLI's own operations (src/operations), handed in by the command that
 * starts the daemon (the console sits below them). A refusal (a redrive target other groups
 * read...) throws an Error whose message says why.
 */
export interface UiActionRunner {
  redrive(group: ResolvedGroup, selection: DeadLetterSelection): Promise<ActionOutcome>;
  purge(group: ResolvedGroup, selection: DeadLetterSelection): Promise<ActionOutcome>;
  reap(group: ResolvedGroup, idleMs: number): Promise<ActionOutcome>;
  /** A redrive task of the selection (a filter or all), started by `by`; the leader runs it. */
  startTask(
    group: ResolvedGroup,
    selection: DeadLetterSelection,
    by: string,
  ): Promise<ActionOutcome>;
  /** Cancels the group's task `id` (RUNNING becomes CANCELLING). */
  cancelTask(group: ResolvedGroup, id: string): Promise<ActionOutcome>;
}
