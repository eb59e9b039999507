/**
 * The pieces of readGroupStats.lua's reply (src/scripts/readGroupStats.ts parses the whole): a
 * cursor over the flat reply, and the optional parts of a group's record.
 */
import { ScriptReplyError } from "./scriptReplies.js";

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
}

export function readActivity(cursor: Cursor): ConsumerActivity {
  const entriesRead = cursor.number();
  const consumerCount = cursor.number();
  const minConsumerIdleMs = cursor.number();
  return {
    entriesRead: entriesRead < 0 ? null : entriesRead,
    consumerCount,
    minConsumerIdleMs: minConsumerIdleMs < 0 ? null : minConsumerIdleMs,
  };
}

export function readLaneGroup(cursor: Cursor): RetryLaneGroup | undefined {
  const pending = cursor.number();
  const lag = cursor.number();
  const oldestId = cursor.string();
  const oldestPendingIdleMs = cursor.number();
  const oldestPendingDeliveries = cursor.number();
  if (pending < 0 || lag < -1) return undefined;
  return {
    pending,
    lag: lag < 0 ? null : lag,
    oldestPendingId: oldestId === "" ? undefined : oldestId,
    oldestPendingIdleMs,
    oldestPendingDeliveries,
  };
}
