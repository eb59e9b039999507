import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { ReplyProblem } from "../redis/replies.js";
import type { ConsumerActivity, RetryLaneGroup } from "../scripts/readGroupStats.js";

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
