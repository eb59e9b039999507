import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { ActionOutcome, DeadLetterSelection } from "../ui/UiActions.js";
import { redriveTaskDirectoryKey, redriveTaskKeys } from "../core/redriveTask.js";
import { findRedriveTask } from "../reads/readRedriveTasks.js";
import { runCancelRedriveTask } from "../scripts/cancelRedriveTask.js";
import { startRedriveTask } from "./redriveTasks.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";

/**
 * A task the console starts runs as `dlq redrive --async` would by default: 1,000 dead letters a
 * second (its --rate), kept 7 days once finished (its --keep).
 */
const UI_TASK_RATE = 1000;
const UI_TASK_KEEP_MS = 7 * 24 * 3_600_000;

/**
 * `dlq redrive --async` from the console: a task of the whole selection (a filter, or all), no
 * limit per submission (the leader runs it in batches). Ids are refused: ticked dead letters are
 * a page at most, redriven at once.
 */
export async function startTaskAction(
  redis: ScriptedRedis,
  leaseKey: string,
  group: ResolvedGroup,
  selection: DeadLetterSelection,
  by: string,
): Promise<ActionOutcome> {
  if (selection.scope === "ids") {
    throw new Error(
      "a task redrives by reason, by age or all: redrive ticked dead letters at once",
    );
  }
  const filter = selection.scope === "filter" ? selection : undefined;
  const task = await startRedriveTask(redis, group, {
    leaseKey,
    reason: filter?.reason,
    ...(filter?.olderThanMs !== undefined && { olderThanMs: filter.olderThanMs }),
    limit: Number.POSITIVE_INFINITY,
    to: undefined,
    rate: UI_TASK_RATE,
    startedBy: by,
    keepMs: UI_TASK_KEEP_MS,
  });
  const { id, deadLetterStream, target, toMove, rate } = task;
  return {
    words: `redrive task ${id} started by ${by}: ${toMove} dead letter(s) from ${deadLetterStream} to ${target} at ${rate}/s; the leader runs it`,
    row: { action: "task", task: id, status: task.status, "to move": toMove, rate: `${rate}/s` },
    count: toMove,
    ids: [],
    result: { ...task },
  };
}

/** `dlq cancel TASK` from the console, for a task of this group only. */
export async function cancelTaskAction(
  redis: ScriptedRedis,
  leaseKey: string,
  group: ResolvedGroup,
  id: string,
): Promise<ActionOutcome> {
  // Checked before anything changes: a form names a task of its own group only.
  const task = await findRedriveTask(redis, redriveTaskDirectoryKey(leaseKey), id);
  if (task?.stream !== group.stream || task.group !== group.group) {
    throw new Error(`no redrive task ${id} of this group (finished ones expire)`);
  }
  const key = redriveTaskKeys(task.deadLetterStream, task.id).task;
  const { before, after } = await runCancelRedriveTask(redis, key);
  const words =
    before === "RUNNING"
      ? `${id}: CANCELLING; the leader stops it at its next batch`
      : `${id}: ${after}, left as it is`;
  return {
    words,
    row: { action: "cancel", task: id, before, after },
    count: 0,
    ids: [],
    result: { id, before, after },
  };
}
