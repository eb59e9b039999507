/** What one sweep of one stream/group pair did. */
export interface GroupSweepResult {
  stream: string;
  group: string;
  /** Entries taken from the PEL; each ends requeued, reassigned, dead-lettered or left pending. */
  claimed: number;
  requeued: number;
  reassigned: number;
  deadLettered: number;
  deadLetteredMaxDeliveries: number;
  deadLetteredAction: number;
  /** Idle at least the group's deadLetterAfterIdleMs (reason max-idle), whatever the action. */
  deadLetteredMaxIdle: number;
  /** Dead letters removed by the group's deadLetterMaxLen to make room (never silently). */
  deadLettersDropped: number;
  /** Reassign found no live consumer: put back with its owner, idle time and count unchanged. */
  leftPending: number;
  /**
   * Claimed from a consumer that read from the group within minIdleMs: probably still working on
   * it (minIdleMs shorter than the work, and no heartbeat).
   */
  claimedFromActiveConsumer: number;
  /**
   * Pending ids whose entry was deleted (counted apart, never copied): acknowledged by the sweep,
   * or removed by XAUTOCLAIM.
   */
  ghosts: number;
  /** The first ghost ids, bounded (see MAX_REPORTED_IDS). */
  ghostIds: string[];
  /** Entries too wide to copy in one script call, left pending untouched. */
  oversizedIds: string[];
  /** Entries whose `x-delivery-count` was not a canonical integer (counted as 0). */
  invalidDeliveryCounts: number;
  /** The first of their ids, bounded (see MAX_REPORTED_IDS). */
  invalidDeliveryCountIds: string[];
  /**
   * The first ids each action handled, bounded (see MAX_REPORTED_IDS), in PEL order: the
   * requeued entries' own ids (not their copies'), the reassigned, the dead-lettered (any reason).
   */
  requeuedIds: string[];
  reassignedIds: string[];
  deadLetteredIds: string[];
  /** PEL entries looked at. */
  examined: number;
  /** Script calls. */
  pages: number;
  /** XPENDING windows read by those calls. */
  windows: number;
  /** The longest script call, as timed by the script itself. */
  longestCallMs: number;
  /** False when the budget or a stop request ended the scan before the cursor wrapped. */
  complete: boolean;
  /** A graceful stop ended (or skipped) this group's sweep: not a failure. */
  interrupted: boolean;
  durationMs: number;
  /** The group's dead-letter index was not complete at a page of this sweep: it gets built. */
  deadLetterIndexPending?: true;
  /** The retry lane whose group this sweep created again (it was destroyed by hand). */
  retryLaneRecreated?: string;
  /** Set when the group could not be swept (or not to the end); the counts say what was done. */
  error?: string;
  errorKind?: SweepErrorKind;
  /**
   * Redis Cluster, fenced: the token stored in the stream's fence, when it is not below ours
   * (the token counter went back; see LeaderTerm.moveTokenPast).
   */
  fenceSeen?: number;
}

/**
 * `redis`: Redis did not answer (connection, timeout); `script`: Redis answered, but with a
 * script's own failure or a reply that did not parse; the others name a refusal.
 */
export type SweepErrorKind =
  | "fenced"
  | "missing-stream"
  | "missing-group"
  | "wrong-type"
  | "ids-exhausted"
  | "consumer-collision"
  | "refused"
  | "redis"
  | "script";

export const MAX_REPORTED_IDS = 20;

export function emptyResult(stream: string, group: string): GroupSweepResult {
  return {
    stream,
    group,
    claimed: 0,
    requeued: 0,
    reassigned: 0,
    deadLettered: 0,
    deadLetteredMaxDeliveries: 0,
    deadLetteredAction: 0,
    deadLetteredMaxIdle: 0,
    deadLettersDropped: 0,
    leftPending: 0,
    claimedFromActiveConsumer: 0,
    ghosts: 0,
    ghostIds: [],
    oversizedIds: [],
    invalidDeliveryCounts: 0,
    invalidDeliveryCountIds: [],
    requeuedIds: [],
    reassignedIds: [],
    deadLetteredIds: [],
    examined: 0,
    pages: 0,
    windows: 0,
    longestCallMs: 0,
    complete: false,
    interrupted: false,
    durationMs: 0,
  };
}

/** The `sweep --json` shape (README "Running it"). */
export type GroupSummary =
  | {
      stream: string;
      group: string;
      claimed: number;
      requeued: number;
      reassigned: number;
      deadLettered: number;
      ghosts: number;
      complete: boolean;
      /** Present (true) when a graceful stop ended the sweep of this group early. */
      interrupted?: true;
    }
  | { stream: string; group: string; error: string };

export function toSummary(result: GroupSweepResult): GroupSummary {
  const { stream, group } = result;
  if (result.error !== undefined) return { stream, group, error: result.error };
  return {
    stream,
    group,
    claimed: result.claimed,
    requeued: result.requeued,
    reassigned: result.reassigned,
    deadLettered: result.deadLettered,
    ghosts: result.ghosts,
    complete: result.complete,
    ...(result.interrupted ? { interrupted: true as const } : {}),
  };
}
