import { deadLetterIndexKeys } from "../core/deadLetterIndex.js";
import {
  newRedriveTaskId,
  redriveTaskDirectoryKey,
  redriveTaskKeys,
  type RedriveTask,
} from "../core/redriveTask.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { findRedriveTask } from "../reads/readRedriveTasks.js";
import { runCancelRedriveTask } from "../scripts/cancelRedriveTask.js";
import { runRedriveTaskDirectory } from "../scripts/redriveTaskDirectory.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import { runStartRedriveTask } from "../scripts/startRedriveTask.js";
import { deadLetterRangeEnd } from "./deadLetterRangeEnd.js";
import { countDeadLetters, type DeadLetterReason } from "./deadLetterScan.js";
import { RedriveRefusedError } from "./redriveDeadLetters.js";
import { prepareRedriveTarget, redriveView, type RedriveTo } from "./redriveTarget.js";

export interface StartTaskOptions {
  /** lease.key: the directory of tasks lives beside it. */
  leaseKey: string;
  reason: DeadLetterReason | undefined;
  /** Only dead letters dead-lettered at least this long ago (the range ends at the cutoff). */
  olderThanMs?: number;
  /** At most this many dead letters (Infinity: all). */
  limit: number;
  to: RedriveTo;
  /** Entries per second; 0: unlimited. */
  rate: number;
  startedBy: string;
  /** How long the task is kept once finished. */
  keepMs: number;
  /** Unix ms (tests inject it). */
  now?: () => number;
}

/** Another task of the same dead-letter stream is active: nothing was started. */
export class TaskActiveError extends Error {
  override name = "TaskActiveError";
  constructor(
    readonly deadLetterStream: string,
    readonly activeId: string,
  ) {
    super(
      `dead-letter stream ${deadLetterStream} already has an active redrive task, ${activeId}: wait for it to finish, or cancel it with dlq cancel ${activeId}`,
    );
  }
}

/**
 * `dlq redrive --async`: records a RUNNING task that the leader runs (src/maintenance/
 * RedriveTaskRunner.ts). The same checks as a redrive first (the target, the range fixed at the
 * dead-letter stream's last id now, the count selected); the task is listed in the directory
 * before it is started, so that a crash in between leaves at most a directory entry without a
 * task (pruned by the runner), never a task nobody finds.
 */
export async function startRedriveTask(
  redis: ScriptedRedis,
  configured: ResolvedGroup,
  options: StartTaskOptions,
): Promise<RedriveTask> {
  const group = redriveView(configured, options.to);
  const conflict = await prepareRedriveTarget(redis, group, false);
  if (conflict !== undefined) throw new RedriveRefusedError(conflict);
  const end = await deadLetterRangeEnd(redis, group, options.olderThanMs);
  const endId = typeof end === "string" ? "0-0" : end.endId;
  const selected =
    endId === "0-0" ? 0 : (await countDeadLetters(redis, group, options.reason, endId)).movable;
  const startedAt = (options.now ?? Date.now)();
  const task: RedriveTask = {
    id: newRedriveTaskId(startedAt),
    status: "RUNNING",
    stream: group.stream,
    group: group.group,
    deadLetterStream: group.deadLetterStream,
    target: group.requeueStream,
    index: deadLetterIndexKeys(group).index,
    reason: options.reason ?? "",
    endId,
    cursor: "0-0",
    moved: 0,
    toMove: Math.min(selected, options.limit),
    rate: options.rate,
    startedBy: options.startedBy,
    startedAt,
    finishedAt: 0,
    failure: "",
    keepMs: options.keepMs,
    heldBack: 0,
  };
  const directory = redriveTaskDirectoryKey(options.leaseKey);
  const key = redriveTaskKeys(task.deadLetterStream, task.id).task;
  await runRedriveTaskDirectory(redis, directory, { add: [key], startedAt });
  const { started, activeId } = await runStartRedriveTask(redis, task);
  if (!started) {
    await runRedriveTaskDirectory(redis, directory, { remove: [key] });
    throw new TaskActiveError(task.deadLetterStream, activeId);
  }
  return task;
}

/**
 * `dlq cancel TASK`: RUNNING becomes CANCELLING (the runner's next batch makes it CANCELLED).
 * Undefined when no task has that id.
 */
export async function cancelRedriveTask(
  redis: ScriptedRedis,
  leaseKey: string,
  id: string,
): Promise<{ task: RedriveTask; before: string; after: string } | undefined> {
  const task = await findRedriveTask(redis, redriveTaskDirectoryKey(leaseKey), id);
  if (task === undefined) return undefined;
  const key = redriveTaskKeys(task.deadLetterStream, task.id).task;
  const { before, after } = await runCancelRedriveTask(redis, key);
  return { task, before, after };
}
