import type { ResolvedGroup } from "../core/resolveGroup.js";
import { classifyReplyError, type ReplyProblem } from "../redis/replies.js";
import { RedisUnavailableError } from "../redis/pipeline/runPipeline.js";
import type { GroupStatsReading, ReadGroupStatsResult } from "../scripts/readGroupStats.js";
import type { ConsumerActivity, RetryLaneGroup } from "../scripts/readGroupStatsParts.js";

/** What one scrape learned about one group, straight from Redis, without reading any entry. */
export interface GroupValues {
  /** PEL count (XINFO GROUPS pending). */
  pending: number;
  /** Smallest pending id (undefined: empty PEL). */
  oldestPendingId: string | undefined;
  /** Idle time and delivery count of that entry (0 with an empty PEL). */
  oldestPendingIdleMs: number;
  oldestPendingDeliveries: number;
  /** [consumer, pending] for every consumer with pending entries (with per-consumer series). */
  consumers: [string, number][];
  /** XINFO GROUPS lag as Redis reports it: null when null or absent. */
  lag: number | null;
  lastDeliveredId: string;
  /** XLEN of the stream. */
  streamLength: number;
  /** XLEN of the dead-letter stream; undefined when that key is not a stream. */
  deadLetterLength: number | undefined;
  /**
   * The group's own dead letters, wherever they are kept: the XLEN of its dead-letter index
   * (src/core/deadLetterIndex.ts); undefined when that key is not a stream.
   */
  deadLetters?: number | undefined;
  /** False (or absent) while the index is still being built from older dead letters. */
  deadLettersExact?: boolean;
  /** XLEN of the group's retry lane; undefined without one (or when that key is not a stream). */
  retryLaneLength?: number | undefined;
  /** The lane's group's work; undefined without a lane, or when unknown (see RetryLaneGroup). */
  retryLaneGroup?: RetryLaneGroup | undefined;
  /** The read position and the consumers' latest read attempt: only when the read asked for it. */
  activity?: ConsumerActivity;
}

/**
 * `unreachable`: on Redis Cluster, the node serving the group's slot did not answer (the others
 * did). Nothing is known about the group then, not even whether it is readable.
 */
export type GroupReading =
  | { group: ResolvedGroup; state: "ok"; values: GroupValues }
  | { group: ResolvedGroup; state: ReplyProblem | "unreachable"; detail: string };

export interface ScrapeSnapshot {
  /** Redis TIME, Unix ms: ages are measured on the clock that minted the ids. */
  nowMs: number;
  /** XLEN of every configured stream that exists and is a stream. */
  streamLengths: Map<string, number>;
  groups: GroupReading[];
}

/**
 * The group's own dead letters and whether that count is exact: its index's length once the
 * index is built, and 0 (exact) whenever the dead-letter stream is empty or missing, built or not.
 */
export function ownDeadLetters(values: GroupValues): { count: number; exact: boolean } {
  if (values.deadLetterLength === 0) return { count: 0, exact: true };
  return { count: values.deadLetters ?? 0, exact: values.deadLettersExact === true };
}

/** A group's reading from the reply model, whichever way it was read (the one place for both). */
function readingOf(
  group: ResolvedGroup,
  read: GroupStatsReading,
  streamLength: number,
): GroupReading {
  switch (read.status) {
    case "failed":
      return { group, state: classifyReplyError(new Error(read.error)), detail: read.error };
    case "unreachable":
      return { group, state: "unreachable", detail: read.error };
    case "no-group":
      return { group, state: "no-group", detail: `no group ${group.group} on ${group.stream}` };
    case "read": {
      // The parsed stats are this reading's own: completed in place, not copied (10,000 groups
      // per scrape, and a copy by spread cost a scrape tens of ms).
      const values: GroupValues = Object.assign(read.stats, { streamLength });
      return { group, state: "ok", values };
    }
  }
}

/** What one read of some groups gave; nowMs undefined when it did not get Redis' answer. */
export type ReadPart = Omit<ReadGroupStatsResult, "nowMs"> & { nowMs: number | undefined };

/**
 * The snapshot of `groups` from the parts that read them, in order (each part's groups follow
 * the previous part's). Throws RedisUnavailableError when no part got Redis' time.
 */
export function snapshotOf(
  groups: readonly ResolvedGroup[],
  parts: readonly ReadPart[],
): ScrapeSnapshot {
  const streamLengths = new Map<string, number>();
  const readings: GroupReading[] = [];
  let nowMs: number | undefined;
  for (const part of parts) {
    nowMs ??= part.nowMs;
    for (const [stream, length] of part.streamLengths) streamLengths.set(stream, length);
    for (const read of part.groups) {
      const group = groups[readings.length];
      if (group === undefined) throw new Error("more readings than groups");
      readings.push(readingOf(group, read, part.streamLengths.get(group.stream) ?? 0));
    }
  }
  if (nowMs === undefined) throw new RedisUnavailableError("redis returned no time");
  return { nowMs, streamLengths, groups: readings };
}
