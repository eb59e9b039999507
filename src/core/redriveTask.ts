import { sameSlotKey } from "./keySlot.js";

/**
 * A redrive task (`dlq redrive --async`): a redrive the leader runs in batches, its state in a
 * hash beside the dead-letter stream (README "Operating"). RUNNING and
 * CANCELLING are active; the others are final.
 */
export const REDRIVE_TASK_STATUSES = [
  "RUNNING",
  "CANCELLING",
  "COMPLETED",
  "CANCELLED",
  "FAILED",
] as const;
export type RedriveTaskStatus = (typeof REDRIVE_TASK_STATUSES)[number];

export function isActiveTaskStatus(status: string): boolean {
  return status === "RUNNING" || status === "CANCELLING";
}

/**
 * A task's keys, in its dead-letter stream's hash slot (one script reaches them with the dead
 * letters): `task`, a hash of the task's fields; `active`, per dead-letter stream, the id of its
 * one active task (absent when none). Ids hold no `:` or braces (newRedriveTaskId).
 */
export interface RedriveTaskKeys {
  task: string;
  active: string;
}

export function redriveTaskKeys(deadLetterStream: string, id: string): RedriveTaskKeys {
  return {
    task: sameSlotKey(deadLetterStream, `redrive-task:${id}`),
    active: sameSlotKey(deadLetterStream, "redrive-task-active"),
  };
}

/**
 * The directory of tasks: a sorted set (score: start time, member: the task hash's key) beside
 * the lease key, so that the leader and `dlq tasks` find every task whatever its slot.
 */
export function redriveTaskDirectoryKey(leaseKey: string): string {
  return sameSlotKey(leaseKey, "redrive-tasks");
}

/** `rt-<start, base 36 ms>-<6 random hex digits>`: sorts by start time, unique enough per source. */
export function newRedriveTaskId(nowMs: number, random: () => number = Math.random): string {
  const suffix = Math.floor(random() * 0x1000000)
    .toString(16)
    .padStart(6, "0");
  return `rt-${nowMs.toString(36)}-${suffix}`;
}

/** A task as its hash holds it (README "Operating"). */
export interface RedriveTask {
  id: string;
  status: RedriveTaskStatus;
  /** The dead letters' source stream and group (x-original-stream / x-original-group). */
  stream: string;
  group: string;
  deadLetterStream: string;
  /** Where the copies go: the group's requeue target, or its retry lane (`--to lane`). */
  target: string;
  /** The group's dead-letter index (src/core/deadLetterIndex.ts). */
  index: string;
  /** Only dead letters of this reason; "" for any. */
  reason: string;
  /** The last dead letter of the range (the dead-letter stream's last id at the start). */
  endId: string;
  /** The last dead letter examined: the next batch starts after it. */
  cursor: string;
  moved: number;
  /** The dead letters selected at the start (at most --limit); moved stops there. */
  toMove: number;
  /** Entries per second at most; 0: unlimited. */
  rate: number;
  startedBy: string;
  /** Unix ms. */
  startedAt: number;
  /** Unix ms on the Redis clock; 0 while active. */
  finishedAt: number;
  failure: string;
  /** How long the finished task is kept (its hash expires then). */
  keepMs: number;
  /** Dead letters a reader of the dead-letter stream held back (left in place). */
  heldBack: number;
}

/** The fields of a new task, as the task hash stores them (startRedriveTask.lua). */
export function taskFields(task: RedriveTask): [string, string][] {
  return Object.entries(task).map(([name, value]) => [name, String(value)]);
}

/** A task from its hash (HGETALL); undefined when it is gone or not a task. */
export function parseTaskHash(hash: Record<string, string>): RedriveTask | undefined {
  const status = hash.status as RedriveTaskStatus | undefined;
  if (hash.id === undefined || status === undefined || !REDRIVE_TASK_STATUSES.includes(status)) {
    return undefined;
  }
  const text = (name: string): string => hash[name] ?? "";
  const number = (name: string): number => Number(hash[name] ?? "0") || 0;
  return {
    id: hash.id,
    status,
    stream: text("stream"),
    group: text("group"),
    deadLetterStream: text("deadLetterStream"),
    target: text("target"),
    index: text("index"),
    reason: text("reason"),
    endId: text("endId"),
    cursor: text("cursor"),
    moved: number("moved"),
    toMove: number("toMove"),
    rate: number("rate"),
    startedBy: text("startedBy"),
    startedAt: number("startedAt"),
    finishedAt: number("finishedAt"),
    failure: text("failure"),
    keepMs: number("keepMs"),
    heldBack: number("heldBack"),
  };
}
