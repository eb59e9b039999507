import type { ResolvedGroup } from "../core/resolveGroup.js";
import { flagArg, ScriptReplyError } from "./scriptReplies.js";
import { deadLetterIndexKeys } from "../core/deadLetterIndex.js";
import { callScript, scriptCall, type ScriptCall, type ScriptedRedis } from "./scriptedRedis.js";
import {
  consumerActivity,
  Cursor,
  laneWork,
  readActivityFacts,
  readLaneFacts,
  type ConsumerActivity,
  type RetryLaneGroup,
} from "./readGroupStatsParts.js";

/**
 * The interface of src/scripts/lua/readGroupStats.lua: the request, its arguments, its reply.
 * Read-only; it has no error codes of its own: what Redis answers for a stream or a group is
 * data in the reply (GroupStatsReading), an error for the whole call is Redis' own. The reply
 * model (ReadGroupStatsResult) is also what the reads without scripts give
 * (src/scrape/readGroupCommands.ts), and the rules it needs are in readGroupStatsParts.ts.
 */
export interface ReadGroupStatsRequest {
  groups: readonly (Pick<
    ResolvedGroup,
    "stream" | "group" | "deadLetterStream" | "retryLaneStream"
  > &
    Partial<Pick<ResolvedGroup, "action" | "touchesKey">>)[];
  /** Also read the XPENDING summary (per-consumer counts). */
  perConsumer: boolean;
  /** Also read what the group status needs (ConsumerActivity); a scrape leaves it out. */
  consumers?: ConsumerReadOptions | undefined;
}

export interface ConsumerReadOptions {
  /** sweep.consumerName: the janitor's claims are not a consumer reading the group. */
  janitorConsumer: string;
}

/** One group's state, read without touching an entry. */
export interface GroupStats {
  pending: number;
  lastDeliveredId: string;
  /** Null when Redis reports none (or has no such field). */
  lag: number | null;
  /** Undefined when the PEL is empty. */
  oldestPendingId: string | undefined;
  oldestPendingIdleMs: number;
  oldestPendingDeliveries: number;
  /** Undefined when XLEN failed (the key is not a stream). */
  deadLetterLength: number | undefined;
  /** Undefined without a retry lane, or when XLEN failed. */
  retryLaneLength: number | undefined;
  /** Undefined without a retry lane, or when its group's work is unknown. */
  retryLaneGroup: RetryLaneGroup | undefined;
  /** [consumer, pending] pairs; empty unless perConsumer. */
  consumers: [string, number][];
  /** Only when the request asked for consumers. */
  activity?: ConsumerActivity;
  /** The group's own dead letters (its index's XLEN); undefined when that key is not a stream. */
  deadLetters: number | undefined;
  /** False while the index is being built: deadLetters is then a lower bound. */
  deadLettersExact: boolean;
}

/**
 * A group as read: its stats, no such group, the error Redis answered for it, or (reads on Redis
 * Cluster) the node serving it did not answer.
 */
export type GroupStatsReading =
  | { status: "read"; stats: GroupStats }
  | { status: "no-group" }
  | { status: "failed"; error: string }
  | { status: "unreachable"; error: string };

export interface ReadGroupStatsResult {
  /** Redis TIME, Unix ms. */
  nowMs: number;
  /** XLEN of each stream that could be read. */
  streamLengths: Map<string, number>;
  /** In the order of the request's groups. */
  groups: GroupStatsReading[];
}

/** The reassign action hands entries over with XCLAIM and records it in the touches hash. */
export function touchesKeyOf(
  group: Partial<Pick<ResolvedGroup, "action" | "touchesKey">>,
): string | undefined {
  return group.action === "reassign" ? group.touchesKey : undefined;
}

function touchesIndex(
  keys: string[],
  group: Partial<Pick<ResolvedGroup, "action" | "touchesKey">>,
): number {
  const key = touchesKeyOf(group);
  return key === undefined ? 0 : keys.push(key);
}

export function readGroupStatsArgs(request: ReadGroupStatsRequest): ScriptCall {
  const streamIndex = new Map<string, number>();
  for (const group of request.groups) {
    if (!streamIndex.has(group.stream)) streamIndex.set(group.stream, streamIndex.size + 1);
  }
  const keys: string[] = [...streamIndex.keys()];
  for (const group of request.groups) keys.push(group.deadLetterStream);
  const { consumers } = request;
  const flags = flagArg(request.perConsumer) + (consumers === undefined ? "" : "c");
  const argv: (string | number)[] = [flags, streamIndex.size];
  for (const group of request.groups) {
    const lane = group.retryLaneStream === undefined ? 0 : keys.push(group.retryLaneStream);
    argv.push(streamIndex.get(group.stream) ?? 0, group.group, lane);
  }
  if (consumers !== undefined) {
    // The janitor's hand-offs (reassign) reset a consumer's idle: the script discounts them.
    for (const group of request.groups) argv.push(touchesIndex(keys, group));
  }
  for (const group of request.groups) {
    const { index, state } = deadLetterIndexKeys(group);
    keys.push(index, state);
  }
  return scriptCall(keys, argv);
}

/** How to read one group's record: with the consumers' activity (then at nowMs), with a lane. */
interface RecordShape {
  consumers: ConsumerReadOptions | undefined;
  nowMs: number;
  withLane: boolean;
}

/** A group's record, read front to back. */
function readStats(cursor: Cursor, shape: RecordShape): GroupStats {
  const pending = cursor.number();
  const lastDeliveredId = cursor.string();
  const lag = cursor.number();
  const oldestId = cursor.string();
  const oldestPendingIdleMs = cursor.number();
  const oldestPendingDeliveries = cursor.number();
  const deadLetterLength = cursor.number();
  const retryLaneLength = cursor.number();
  const retryLaneGroup = shape.withLane ? laneWork(readLaneFacts(cursor)) : undefined;
  const consumers = cursor.pairs();
  const { consumers: read, nowMs } = shape;
  const activity =
    read === undefined
      ? undefined
      : consumerActivity(readActivityFacts(cursor), read.janitorConsumer, nowMs);
  const deadLetters = cursor.number();
  const deadLettersExact = cursor.number() === 1;
  return {
    pending,
    lastDeliveredId,
    lag: lag < 0 ? null : lag,
    oldestPendingId: oldestId === "" ? undefined : oldestId,
    oldestPendingIdleMs,
    oldestPendingDeliveries,
    deadLetterLength: deadLetterLength < 0 ? undefined : deadLetterLength,
    retryLaneLength: retryLaneLength < 0 ? undefined : retryLaneLength,
    retryLaneGroup,
    consumers,
    ...(activity === undefined ? {} : { activity }),
    deadLetters: deadLetters < 0 ? undefined : deadLetters,
    deadLettersExact,
  };
}

export function parseReadGroupStatsReply(
  request: ReadGroupStatsRequest,
  reply: unknown,
): ReadGroupStatsResult {
  if (!Array.isArray(reply)) throw new ScriptReplyError("readGroupStats: reply is not an array");
  const cursor = new Cursor(reply);
  const seconds = cursor.number();
  const nowMs = seconds * 1000 + Math.floor(cursor.number() / 1000);
  const streamLengths = new Map<string, number>();
  const streamErrors = new Map<string, string>();
  for (const stream of new Set(request.groups.map((group) => group.stream))) {
    const error = cursor.string();
    const length = cursor.number();
    if (error === "") streamLengths.set(stream, length);
    else streamErrors.set(stream, error);
  }
  const groups = request.groups.map((group): GroupStatsReading => {
    const status = cursor.string();
    if (status === "S") {
      return { status: "failed", error: streamErrors.get(group.stream) ?? "no stream" };
    }
    if (status === "G") return { status: "no-group" };
    if (status !== "") return { status: "failed", error: status };
    const withLane = group.retryLaneStream !== undefined;
    const shape = { consumers: request.consumers, nowMs, withLane };
    return { status: "read", stats: readStats(cursor, shape) };
  });
  return { nowMs, streamLengths, groups };
}

/** Sends one call; its reply is parsed with parseReadGroupStatsReply (the caller times it). */
export function callReadGroupStats(
  redis: ScriptedRedis,
  request: ReadGroupStatsRequest,
): Promise<unknown> {
  return callScript(redis, "sjReadGroupStats", readGroupStatsArgs(request));
}
