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

export type RedisMode = "standalone" | "sentinel" | "cluster";

export const REDIS_MODES: readonly RedisMode[] = ["standalone", "sentinel", "cluster"];

export interface JanitorConfig {
  redis: {
    url: string;
    password: string;
    passwordFile: string;
    /** Absent: standalone. */
    mode?: RedisMode;
    /** Sentinel: the Sentinels; cluster: more seed nodes ("host:port"). */
    nodes?: string[];
  };
  http: { host: string; port: number };
  log: { level: string };
  lease: { key: string; ttlMs: number; renewDeadlineMs: number; retryPeriodMs: number };
  sweep: {
    intervalMs: number;
    /** At most this many entries claimed by one script call. */
    batchSize: number;
    /** Time budget of one script call; pages adapt to stay under it. */
    maxScriptMs: number;
    maxEntriesPerGroup: number;
    /** The janitor's own consumer inside each group. */
    consumerName: string;
  };
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
}
