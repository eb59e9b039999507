import type { JanitorConfig } from "../core/configTypes.js";
import { janitorConsumerName } from "../core/janitorConsumerName.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { reapConsumers } from "../maintenance/reapConsumers.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import type { ActionOutcome, DeadLetterSelection, UiActionRunner } from "../ui/UiActions.js";
import { describeHeldBack } from "./HeldBackTally.js";
import { purgeDeadLetters } from "./purgeDeadLetters.js";
import { RateLimiter } from "./RateLimiter.js";
import { redriveDeadLetters } from "./redriveDeadLetters.js";
import { redriveView } from "./redriveTarget.js";
import { cancelTaskAction, startTaskAction } from "./uiTaskActions.js";

/**
 * The bounds of one console action, as the CLI's defaults are: `dlq redrive` moves 1,000 dead
 * letters a second (its --rate); a console redrive moves at most UI_REDRIVE_LIMIT (its --limit),
 * so that a request ends within seconds; "submit again" moves the next ones. The group page's
 * note states both (src/ui/actionForms.ts).
 */
const UI_REDRIVE_RATE = 1000;
const UI_REDRIVE_LIMIT = 5000;

/** The ids an event can name: those asked for, less the ones not done (as the CLI's doneIds). */
function doneIds(selection: DeadLetterSelection, done: number, notDone: readonly string[]) {
  if (selection.scope !== "ids") return [];
  const skipped = new Set(notDone);
  const ids = selection.ids.filter((id) => !skipped.has(id));
  return ids.length === done ? ids : [];
}

function selectors(selection: DeadLetterSelection) {
  return {
    ...(selection.scope === "ids" && { ids: selection.ids }),
    ...(selection.scope === "filter" && {
      reason: selection.reason,
      olderThanMs: selection.olderThanMs,
    }),
  };
}

async function redrive(
  redis: ScriptedRedis,
  group: ResolvedGroup,
  selection: DeadLetterSelection,
): Promise<ActionOutcome> {
  const { ids, reason, olderThanMs } = selectors(selection);
  const summary = await redriveDeadLetters(redis, group, {
    limit: ids === undefined ? UI_REDRIVE_LIMIT : Number.POSITIVE_INFINITY,
    reason,
    ...(olderThanMs !== undefined && { olderThanMs }),
    ...(ids !== undefined && { ids }),
    dryRun: false,
    limiter: new RateLimiter({ ratePerSecond: UI_REDRIVE_RATE }),
  });
  const target = redriveView(group, undefined).requeueStream;
  const unknown = summary.unknownIds ?? [];
  const notFound =
    unknown.length > 0 ? `; not dead letters of this group: ${unknown.join(", ")}` : "";
  return {
    words: `redriven ${summary.redriven} dead letter(s) from ${group.deadLetterStream} to ${target}; ${summary.remaining} remaining${describeHeldBack(summary.heldBackBy)}${notFound}`,
    row: { action: "redrive", redriven: summary.redriven, remaining: summary.remaining, target },
    count: summary.redriven,
    ids: doneIds(selection, summary.redriven, [...unknown, ...(summary.oversizedIds ?? [])]),
    result: { ...summary },
  };
}

async function purge(
  redis: ScriptedRedis,
  group: ResolvedGroup,
  selection: DeadLetterSelection,
): Promise<ActionOutcome> {
  const { ids, reason, olderThanMs } = selectors(selection);
  const summary = await purgeDeadLetters(redis, group, {
    olderThanMs,
    reason,
    ...(ids !== undefined && { ids }),
    dryRun: false,
  });
  const unknown = summary.unknownIds ?? [];
  const notFound =
    unknown.length > 0 ? `; not dead letters of this group: ${unknown.join(", ")}` : "";
  return {
    words: `purged ${summary.purged} dead letter(s) from ${group.deadLetterStream}; ${summary.remaining} remaining${describeHeldBack(summary.heldBackBy)}${notFound}`,
    row: { action: "purge", purged: summary.purged, remaining: summary.remaining },
    count: summary.purged,
    ids: doneIds(selection, summary.purged, unknown),
    result: { ...summary },
  };
}

/**
 * The console's actions on the CLI's own code: `dlq redrive` (redriveDeadLetters, at the CLI's
 * default rate, at most UI_REDRIVE_LIMIT per action), `dlq purge` (purgeDeadLetters) and
 * `consumers reap` (reapConsumers), `dlq redrive --async` and `dlq cancel` (uiTaskActions), each as
 * the CLI runs it: unfenced, every check and write in
 * one script per page, so a replica that is not the leader acts as safely as a shell would.
 */
export function createUiActionRunner(
  redis: ScriptedRedis,
  config: Pick<JanitorConfig, "sweep" | "lease">,
): UiActionRunner {
  const leaseKey = config.lease.key;
  return {
    redrive: (group, selection) => redrive(redis, group, selection),
    purge: (group, selection) => purge(redis, group, selection),
    reap: async (group, idleMs) => {
      const summary = await reapConsumers(redis, {
        stream: group.stream,
        group: group.group,
        idleMs,
        janitorConsumer: janitorConsumerName(config),
        dryRun: false,
      });
      const names = summary.reaped.length === 0 ? "" : `: ${summary.reaped.join(", ")}`;
      return {
        words: `reaped ${summary.reaped.length} consumer(s)${names}; ${summary.keptWithPending} kept with pending entries`,
        row: { action: "reap", reaped: summary.reaped.length, kept: summary.keptWithPending },
        count: summary.reaped.length,
        ids: summary.reaped,
        result: { ...summary },
      };
    },
    startTask: (group, selection, by) => startTaskAction(redis, leaseKey, group, selection, by),
    cancelTask: (group, id) => cancelTaskAction(redis, leaseKey, group, id),
  };
}
