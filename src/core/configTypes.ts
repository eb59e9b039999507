/** The validated, effective configuration (README "Configuration"). Durations are milliseconds. */

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
  /**
   * requeue only: copies go to the group's own retry lane (resolveGroup names it), swept as part
   * of the group. Optional only for configurations built in code; loadConfig always sets it.
   */
  retryLane?: boolean;
  /**
   * > 0: at each sweep, delete consumers that own nothing and were inactive this long. Optional
   * only for configurations built in code; loadConfig always sets it (default 0: never).
   */
  reapConsumersIdleMs?: number;
  /**
   * Claim thresholds by delivery count: an entry delivered d times is claimed once idle
   * max(minIdleMs, backoffMs[min(d, len) - 1]) (src/core/backoffThreshold.ts). Optional, like
   * reapConsumersIdleMs, for configurations built in code; loadConfig always sets it (default []).
   */
  backoffMs?: number[];
  /** 0..0.5: each threshold times a factor in [1 - j, 1 + j] fixed by the entry's id (default 0). */
  backoffJitter?: number;
  /**
   * > 0: an entry idle this long is dead-lettered (reason max-idle) whatever the action; monitor
   * never claims. Optional only for configurations built in code; loadConfig always sets it
   * (default 0: off).
   */
  deadLetterAfterIdleMs?: number;
}

/** One `retention` entry: the leader trims the stream safely toward these limits (0: none). */
export interface RetentionConfig {
  stream: string;
  maxLen: number;
  maxAgeMs: number;
}

/** A `discover` entry: globs over stream and group names, then the settings of a `groups` entry. */
export interface DiscoverConfig extends Omit<GroupConfig, "stream" | "group"> {
  /** Redis glob over stream key names (SCAN MATCH). */
  match: string;
  /** Redis glob over the group names of each matching stream. */
  groups: string;
}

interface DiscoveryConfig {
  /** How often the patterns are re-scanned. */
  intervalMs: number;
  /** Cap on discovered groups; beyond it the first ones by stream/group name are kept. */
  maxGroups: number;
}

export type RedisMode = "standalone" | "sentinel" | "cluster";

export const REDIS_MODES: readonly RedisMode[] = ["standalone", "sentinel", "cluster"];

/** Files are paths here; their contents are read when connections are made (checked at load). */
export interface RedisTlsConfig {
  /** PEM bundle of the CAs to trust; empty: the system's CAs. */
  caFile: string;
  /** Client certificate and key, for mutual TLS; both or neither. */
  certFile: string;
  keyFile: string;
  /** Name to verify in the server's certificate; empty: the host of the URL. */
  serverName: string;
}

export interface RedisConfig {
  mode: RedisMode;
  /** redis://, rediss:// (TLS) or unix:///path. Sentinel mode: scheme, credentials and db only. */
  url: string;
  /** Sentinel: the Sentinels; cluster: more seed nodes ("host:port"). */
  nodes: string[];
  masterName: string;
  /** ACL user; empty: the URL's user, else `default`. */
  username: string;
  password: string;
  passwordFile: string;
  sentinelPassword: string;
  sentinelPasswordFile: string;
  tls: RedisTlsConfig;
}

/** One role's credentials file: exactly one of the two is set (README "Roles and actions"). */
export interface HttpRoleFiles {
  bearerTokenFile: string;
  basicAuthFile: string;
}

/** http.auth.roles: who may look (viewer) and who may also act (operator). */
export interface HttpRolesConfig {
  viewer?: HttpRoleFiles;
  operator?: HttpRoleFiles;
}

export interface JanitorConfig {
  redis: RedisConfig;
  http: {
    host: string;
    port: number;
    /** README "HTTP authentication": protects every path but /livez and /readyz; "" is off. */
    auth: {
      bearerTokenFile: string;
      basicAuthFile: string;
      /** README "Roles and actions": set only when the file has http.auth.roles. */
      roles?: HttpRolesConfig;
    };
    /** README "Web console": the web console at /ui; `actions` lets operators act from it. */
    ui: { enabled: boolean; showBodies: boolean; historyMinutes: number; actions?: boolean };
  };
  log: { level: string };
  lease: {
    key: string;
    ttlMs: number;
    renewDeadlineMs: number;
    retryPeriodMs: number;
    /** > 0: after acquiring, WAIT until this many replicas have the lease before acting. */
    waitReplicas?: number;
    /** Bound on that WAIT; must stay below retryPeriodMs. */
    waitTimeoutMs?: number;
  };
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
  /** How the gauges are collected (README "HTTP and metrics"). */
  metrics: {
    /** Per-consumer series (off by default: consumer names are unbounded). */
    perConsumer: boolean;
    /** Cap on per-consumer series per group. */
    maxConsumersPerGroup: number;
    /** Cadence of the paged PEL scan behind max idle and max deliveries. */
    pelScanIntervalMs: number;
    /** Bound on the Redis reads done at scrape time. */
    scrapeTimeoutMs: number;
    /** How long a scrape waits for its own read before the last complete one answers it. */
    scrapeReadWaitMs: number;
  };
  groups: GroupConfig[];
  discover: DiscoverConfig[];
  discovery: DiscoveryConfig;
  /**
   * Group status (README "Group status"): one sample of every group per `intervalMs`, a verdict over
   * the last `window` samples; `stuckAfterMs` 0 means 10 x the group's minIdleMs.
   */
  status: { intervalMs: number; window: number; stuckAfterMs: number };
  /** Advisory events (README "Configuration", `events.*`): `stream` "" turns them off; `maxLen` is approximate. */
  events: { stream: string; maxLen: number };
  /** Safe trimming per stream (README "Operating", `trim`). */
  retention: RetentionConfig[];
}
