import type { ResolvedGroup } from "../core/resolveGroup.js";
import { readIdle, readSelection, readTaskId } from "./actionRequest.js";
import type { ActionOutcome, UiActionKind, UiActionRunner } from "./UiActions.js";

/** What an admitted form did, or why it was not done (`confirmation`: the name typed was wrong). */
export type KindRun =
  | { ok: true; outcome: ActionOutcome; selection: Record<string, unknown> }
  | { ok: false; problem: string; confirmation?: true };

/**
 * Reads the form's fields for `kind` and runs it (README "Roles and actions"): reap an idle time,
 * redrive/purge/task a selection, cancel a task id. A refusal of the runner (another active task,
 * a target other groups read) is thrown, with words that say why.
 */
export async function runActionKind(
  runner: UiActionRunner,
  kind: UiActionKind,
  form: URLSearchParams,
  group: ResolvedGroup,
  by: string,
): Promise<KindRun> {
  if (kind === "reap") {
    const idleMs = readIdle(form);
    if (idleMs === undefined) {
      return { ok: false, problem: "reap needs an idle time above 0, such as 30m or 1h" };
    }
    return { ok: true, outcome: await runner.reap(group, idleMs), selection: { idleMs } };
  }
  if (kind === "cancel") {
    const id = readTaskId(form);
    if (id === undefined) return { ok: false, problem: "cancel names no task (task)" };
    return { ok: true, outcome: await runner.cancelTask(group, id), selection: { task: id } };
  }
  const read = readSelection(form, group);
  if (!read.ok) {
    const { problem, confirmation } = read;
    return { ok: false, problem, ...(confirmation === true && { confirmation }) };
  }
  const selection = { ...read.selection };
  const outcome =
    kind === "task"
      ? await runner.startTask(group, read.selection, by)
      : await runner[kind](group, read.selection);
  return { ok: true, outcome, selection };
}
