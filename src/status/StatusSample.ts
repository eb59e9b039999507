/**
 * One sample of one group, as the status sampler took it (contract section 9): the body-free
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
