/**
 * The reply model of a group's read, shared by both ways the scrape reads (src/README.md "The
 * scrape's reads"): readGroupStats.lua, parsed by src/scripts/readGroupStats.ts, and the plain
 * commands of src/scrape/readGroupCommands.ts. Both gather the same facts (what Redis answered,
 * no rule applied) and turn them into a group's values with the rules below, which live here only.
 */
import { ScriptReplyError } from "./scriptReplies.js";
import { classifyReplyError, type PendingEntry } from "../redis/replies.js";

/**
 * Whether the group's consumers read, for the group status (README "Group status"): its read
 * position and when any consumer last tried to read. XINFO GROUPS and XINFO CONSUMERS only.
 */
export interface ConsumerActivity {
  /** XINFO GROUPS entries-read; null when Redis reports none (before 7.0, or after SETID). */
  entriesRead: number | null;
  /** Consumers of the group, the janitor's own left out. */
  consumerCount: number;
  /** The smallest XINFO CONSUMERS idle among them (their latest read attempt); null: none. */
  minConsumerIdleMs: number | null;
}

/** What ConsumerActivity is made of, as Redis answered it. */
export interface ActivityFacts {
  /** XINFO GROUPS entries-read; null when Redis reports none. */
  entriesRead: number | null;
  /** [name, idle ms] of every consumer XINFO CONSUMERS lists with an idle time. */
  idles: [string, number][];
  /** The touches hash of a reassign group: consumer -> Unix ms of the janitor's last XCLAIM. */
  touches: ReadonlyMap<string, number>;
}

/**
 * The activity rule: the janitor's own consumer is not a consumer reading, and a consumer whose
 * latest activity is the janitor's XCLAIM to it (its touch, at or after now - idle - 1 ms) has
 * not read: an XCLAIM resets a consumer's idle as a read would (the rule sweepPage.lua applies
 * to reassign's live consumers).
 */
export function consumerActivity(
  facts: ActivityFacts,
  janitorConsumer: string,
  nowMs: number,
): ConsumerActivity {
  let consumerCount = 0;
  let minConsumerIdleMs: number | null = null;
  for (const [name, idle] of facts.idles) {
    if (name === janitorConsumer) continue;
    consumerCount += 1;
    const since = facts.touches.get(name);
    if (since !== undefined && nowMs - idle <= since + 1) continue;
    minConsumerIdleMs = minConsumerIdleMs === null ? idle : Math.min(minConsumerIdleMs, idle);
  }
  return { entriesRead: facts.entriesRead, consumerCount, minConsumerIdleMs };
}

/**
 * The work in a group's retry lane (its consumer group on the lane), read like the source's.
 * Undefined when unknown: the lane exists without its group, or could not be read. A lane not
 * created yet holds nothing: 0 pending, lag 0.
 */
export interface RetryLaneGroup {
  pending: number;
  /** Null when Redis reports none. */
  lag: number | null;
  /** Undefined when the lane's PEL is empty. */
  oldestPendingId: string | undefined;
  oldestPendingIdleMs: number;
  oldestPendingDeliveries: number;
}

/** What RetryLaneGroup is made of, as Redis answered it. */
export interface LaneFacts {
  /** The error XINFO GROUPS of the lane answered; undefined when it answered. */
  error: string | undefined;
  /** The lane's group, as XINFO GROUPS lists it; undefined when the lane has no such group. */
  group: { pending: number; lag: number | null } | undefined;
  /** The oldest entry the group has pending on the lane (XPENDING lane group - + 1), if read. */
  oldest: Pick<PendingEntry, "id" | "idleMs" | "deliveries"> | undefined;
}

/** The lane rule (see RetryLaneGroup): unknown unless the lane's group could be read. */
export function laneWork(facts: LaneFacts): RetryLaneGroup | undefined {
  if (facts.error !== undefined) {
    if (classifyReplyError(new Error(facts.error)) !== "no-stream") return undefined;
    return {
      pending: 0,
      lag: 0,
      oldestPendingId: undefined,
      oldestPendingIdleMs: 0,
      oldestPendingDeliveries: 0,
    };
  }
  if (facts.group === undefined) return undefined;
  const oldest = facts.group.pending > 0 ? facts.oldest : undefined;
  return {
    pending: facts.group.pending,
    lag: facts.group.lag,
    oldestPendingId: oldest?.id,
    oldestPendingIdleMs: oldest?.idleMs ?? 0,
    oldestPendingDeliveries: oldest?.deliveries ?? 0,
  };
}

/** A flat readGroupStats reply, read front to back. */
export class Cursor {
  private at = 0;
  constructor(private readonly reply: readonly unknown[]) {}
  next(): unknown {
    if (this.at >= this.reply.length) throw new ScriptReplyError("readGroupStats: reply too short");
    return this.reply[this.at++];
  }
  string(): string {
    const value = this.next();
    return typeof value === "string" ? value : String(value);
  }
  number(): number {
    const value = Number(this.next());
    if (!Number.isFinite(value)) throw new ScriptReplyError("readGroupStats: not a number");
    return value;
  }
  /** A count, then that many [string, number] pairs. */
  pairs(): [string, number][] {
    const pairs: [string, number][] = [];
    for (let count = this.number(); count > 0; count -= 1) {
      pairs.push([this.string(), this.number()]);
    }
    return pairs;
  }
}

/** entriesRead (-1: null), the consumers' [name, idle] pairs, then the touches' [name, ms]. */
export function readActivityFacts(cursor: Cursor): ActivityFacts {
  const entriesRead = cursor.number();
  const idles = cursor.pairs();
  const touches = new Map(cursor.pairs());
  return { entriesRead: entriesRead < 0 ? null : entriesRead, idles, touches };
}

/**
 * The lane's XINFO GROUPS error ('' none), its group's pending (-1: no such group), lag (-1:
 * null), oldest pending id ('' none), its idle ms and deliveries.
 */
export function readLaneFacts(cursor: Cursor): LaneFacts {
  const error = cursor.string();
  const pending = cursor.number();
  const lag = cursor.number();
  const oldestId = cursor.string();
  const idleMs = cursor.number();
  const deliveries = cursor.number();
  return {
    error: error === "" ? undefined : error,
    group: pending < 0 ? undefined : { pending, lag: lag < 0 ? null : lag },
    oldest: oldestId === "" ? undefined : { id: oldestId, idleMs, deliveries },
  };
}
