/** The validated, effective configuration (contract section 3). Durations are milliseconds. */

export type GroupAction = "requeue" | "reassign" | "dead-letter" | "monitor";

export const GROUP_ACTIONS: readonly GroupAction[] = [
  "requeue",
  "reassign",
  "dead-letter",
  "monitor",
];

export interface GroupConfig {
  stream: string;
  group: string;
  minIdleMs: number;
  maxDeliveries: number;
  action: GroupAction;
  /** Empty means the source stream. */
  requeueStream: string;
  /** Empty means the default dead-letter stream, in the source's hash slot. */
  deadLetterStream: string;
  deadLetterMaxLen: number;
}

/** A `discover` entry: globs over stream and group names, then the settings of a `groups` entry. */
export interface DiscoverConfig extends Omit<GroupConfig, "stream" | "group"> {
  /** Redis glob over stream key names (SCAN MATCH). */
  match: string;
  /** Redis glob over the group names of each matching stream. */
  groups: string;
}

export interface DiscoveryConfig {
  /** How often the patterns are re-scanned. */
  intervalMs: number;
  /** Cap on discovered groups; beyond it the first ones by stream/group name are kept. */
  maxGroups: number;
}

export interface JanitorConfig {
  redis: { url: string; password: string; passwordFile: string };
  http: { host: string; port: number };
  log: { level: string };
  lease: { key: string; ttlMs: number; renewDeadlineMs: number; retryPeriodMs: number };
  sweep: { intervalMs: number; batchSize: number; maxEntriesPerGroup: number };
  /** Extensions beyond contract section 3: how the gauges are collected. */
  metrics: {
    /** Per-consumer series (off by default: consumer names are unbounded). */
    perConsumer: boolean;
    /** Cap on per-consumer series per group. */
    maxConsumersPerGroup: number;
    /** Cadence of the paged PEL scan behind max idle and max deliveries. */
    pelScanIntervalMs: number;
    /** Bound on the Redis reads done at scrape time. */
    scrapeTimeoutMs: number;
  };
  groups: GroupConfig[];
  discover: DiscoverConfig[];
  discovery: DiscoveryConfig;
}
