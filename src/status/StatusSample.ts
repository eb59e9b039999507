/**
 * One sample of one group, as the status sampler took it (README "Group status"): the body-free
 * reads of a scrape plus the consumers' activity, on the Redis clock. What judgeGroup() looks at.
 */
export type StatusSample = ReadableSample | UnreadableSample;

export interface ReadableSample {
  readable: true;
  /** Redis TIME, Unix ms. */
  atMs: number;
  /** XINFO GROUPS lag; null when Redis reports null or more than XLEN (see sampleOf). */
  lag: number | null;
  pending: number;
  /** Pending entries past their claim threshold (see sampleOf). */
  due: number;
  /** Idle time of the oldest pending entry; 0 with an empty PEL. */
  oldestPendingIdleMs: number;
  deadLetters: number | null;
  retryLane: number | null;
  /** The retry lane's lag (copies not yet delivered); null unknown, absent without a lane. */
  retryLaneLag?: number | null;
  /** Copies pending in the retry lane; null unknown, absent without a lane. */
  retryLanePending?: number | null;
  /** Copies in the lane past their claim threshold (a lower bound, see laneDue). */
  retryLaneDue?: number;
  lastDeliveredId: string;
  /**
   * Redis reports no lag and no entries-read, yet the stream is not empty: Redis computes a lag
   * whenever the position is the stream's last id, so entries were added after it. Trimming
   * cannot remove them without emptying what comes before: only XDEL of every one of them, or
   * XGROUP SETID past the stream's end, gives the same reply with nothing waiting.
   */
  addedAfterPosition?: boolean;
  /**
   * The lag Redis reported when no entry follows the group's last-delivered id (see
   * checkLagBacked): its entries-read counter is stale, so `lag` is null.
   */
  unbackedLag?: number;
  /**
   * action monitor only (the janitor never claims there): a pending entry delivered more than
   * maxDeliveries times, the PEL scan's when it has one, else the oldest pending entry.
   */
  overDelivered?: { id: string; deliveries: number; maxDeliveries: number };
  /** XINFO GROUPS entries-read: the read position when Redis knows it. */
  entriesRead: number | null;
  /** Consumers of the group, the janitor's own left out. */
  consumerCount: number;
  /** Their smallest XINFO CONSUMERS idle (the latest read attempt); null without consumers. */
  minConsumerIdleMs: number | null;
}

/** The stream or group could not be read: missing, wrong type, no permission. */
interface UnreadableSample {
  readable: false;
  atMs: number;
  /** What Redis said, in words. */
  error: string;
}
