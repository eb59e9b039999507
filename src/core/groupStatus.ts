/**
 * Group status (README "Group status"): the words of the verdict and the shape /status.json serves.
 * Defined here, at the bottom, because the sampler that computes it, the HTTP endpoint and the
 * web console that show it, the metrics that export it and the commands that print it all share
 * one vocabulary.
 */

/** The verdicts, in the order the table is evaluated: first match wins. */
export const GROUP_STATUSES = [
  "ERROR",
  "REWIND",
  "STOP",
  "STALL",
  "STUCK",
  "WARN",
  "UNKNOWN",
  "OK",
] as const;

export type GroupStatus = (typeof GROUP_STATUSES)[number];

/** The verdicts that call for someone's attention (alerts exist for each): all but UNKNOWN and OK. */
export const BAD_STATUSES: readonly GroupStatus[] = GROUP_STATUSES.filter(
  (status) => status !== "UNKNOWN" && status !== "OK",
);

/** The latest sample of a group, as /status.json serves it; null where it is not known. */
export interface StatusSampleReport {
  /** XINFO GROUPS lag; null while Redis reports it as null (or the group cannot be read). */
  lag: number | null;
  pending: number | null;
  /** Pending entries idle past their claim threshold (what the next sweep would claim). */
  due: number | null;
  oldestPendingIdleMs: number | null;
  /** XLEN of the group's dead-letter stream. */
  deadLetters: number | null;
  /** XLEN of the group's retry lane; null without one. */
  retryLane: number | null;
  /** The retry lane's lag and pending copies; null without a lane or when unknown. */
  retryLaneLag?: number | null;
  retryLanePending?: number | null;
  /** The group's last-delivered id: its timestamp tells how old the delivered work is. */
  lastDeliveredId: string | null;
}

export interface GroupStatusReport {
  stream: string;
  group: string;
  status: GroupStatus;
  /** The verdict in words and numbers ("lag 1200 and growing: 340 -> 1200 in 90s ..."). */
  reason: string;
  /** Unix ms (Redis clock) of the first sample with this status. */
  since: number;
  sample: StatusSampleReport;
}

/** The body of GET /status.json. */
export interface StatusReport {
  /**
   * "command": `stream-janitor status` sampled Redis itself because no janitor answered. A
   * janitor's /status.json leaves it out.
   */
  sampledBy?: "command";
  /** Unix ms (Redis clock) of the latest sample; 0 before the first. */
  generatedAt: number;
  /**
   * Present only while the latest sampling round could not reach Redis: an outage is not a
   * verdict, so every group keeps the one it had, as of generatedAt.
   */
  redis?: "unreachable";
  leader: {
    /** Whether this replica holds the lease now. */
    isLeader: boolean;
    /** This replica's instance id (the `by` of its events). */
    instance: string;
    /** Fencing token of this replica's current term; null when it is not the leader. */
    fencingToken: number | null;
  };
  server: {
    /** "redis" or "valkey"; null until detected. */
    product: string | null;
    /** The product's own version ("7.0.15", "8.0.1"); null until detected. */
    version: string | null;
    /** "standalone", "sentinel" or "cluster" (the configured mode). */
    mode: string;
    /** What the janitor detected (reportsDeletedIds, groupLag, consumerInactive); {} until then. */
    capabilities: Record<string, boolean>;
  };
  /** status.intervalMs and status.window, so a reader knows what the verdicts looked at. */
  sampling: { intervalMs: number; window: number };
  groups: GroupStatusReport[];
}

/**
 * What the status sampler offers the rest of the daemon (HTTP, web console): the verdicts as of
 * its latest sample. Every replica has one.
 */
export interface StatusBoard {
  /** The whole report, as /status.json serves it. */
  report(): StatusReport;
  /** One group's verdict by its id (ResolvedGroup.id); undefined before its first sample. */
  statusOf(groupId: string): GroupStatusReport | undefined;
}
