import type convict from "convict";
import { GROUP_ACTIONS, REDIS_MODES, type JanitorConfig } from "../core/configTypes.js";
import {
  MAX_DURATION_MS,
  LOG_LEVELS,
  anyString,
  nonEmptyString,
  integer,
  durationBetween,
  duration,
  durationList,
  jitter,
  oneOf,
  redisUrl,
  hostPorts,
  boolean,
  list,
  patternList,
  file,
  leaf,
  type LeafSpec,
  type SchemaNode,
  type SectionSpec,
} from "./configLeaf.js";

export type { LeafSpec, NestedSectionSpec, SchemaNode, SectionSpec } from "./configLeaf.js";

/** The convict view of the configuration: groups are a plain list, checked by loadConfig. */
export type ConvictShape = Omit<JanitorConfig, "groups" | "discover" | "retention"> & {
  groups: unknown[];
  discover: unknown[];
  retention: unknown[];
};

/** README "Configuration". Environment overrides are convict's `env`; they beat the file. */
export const janitorSchema = {
  redis: {
    url: leaf("redis://127.0.0.1:6379", "Redis URL; rediss:// for TLS; unix:///path", redisUrl, {
      env: "STREAM_JANITOR_REDIS_URL",
    }),
    mode: leaf("standalone", "standalone, sentinel or cluster", oneOf(REDIS_MODES)),
    nodes: leaf<string[]>([], "sentinel: the Sentinels; cluster: more seed nodes", hostPorts),
    masterName: leaf("", "sentinel: the name of the monitored master", anyString),
    username: leaf("", "ACL user; empty: the URL's user, else default", anyString, {
      env: "STREAM_JANITOR_REDIS_USERNAME",
    }),
    password: leaf("", "Redis password; prefer passwordFile", anyString, {
      env: "STREAM_JANITOR_REDIS_PASSWORD",
      sensitive: true,
    }),
    passwordFile: leaf("", "file holding the Redis password; wins over password", file, {
      env: "STREAM_JANITOR_REDIS_PASSWORD_FILE",
    }),
    sentinelPassword: leaf("", "the Sentinels' own password", anyString, { sensitive: true }),
    sentinelPasswordFile: leaf("", "file holding the Sentinels' password", file),
    tls: {
      caFile: leaf("", "PEM bundle of CAs to trust; empty: the system's CAs", file),
      certFile: leaf("", "client certificate (PEM), for mutual TLS", file),
      keyFile: leaf("", "client private key (PEM), for mutual TLS", file),
      serverName: leaf("", "name to verify; empty: the host of the URL", anyString),
    },
  },
  http: {
    host: leaf("0.0.0.0", "address of /metrics, /livez, /readyz", nonEmptyString, {
      env: "STREAM_JANITOR_HTTP_HOST",
    }),
    // 0 asks the kernel for a free port, which tests rely on.
    port: leaf(9478, "port of /metrics, /livez, /readyz", integer(0, 65535), {
      env: "STREAM_JANITOR_HTTP_PORT",
    }),
    // Every path but /livez and /readyz; at most one of the two files (validateConfig). Two
    // optional keys live outside convict, present only when given (httpRoles.ts): auth.roles
    // and ui.actions.
    auth: {
      bearerTokenFile: leaf("", "file holding the bearer token every request must send", file),
      basicAuthFile: leaf("", "file of user:password lines for HTTP basic auth", file),
    },
    ui: {
      enabled: leaf(true, "serve the read-only web console at /ui", boolean),
      showBodies: leaf(false, "show entry bodies (truncated) in the web console", boolean),
      historyMinutes: leaf(60, "minutes of history drawn in the console; 0: none", integer(0, 360)),
    },
  },
  log: {
    level: leaf("info", "pino level", oneOf(LOG_LEVELS), { env: "STREAM_JANITOR_LOG_LEVEL" }),
  },
  lease: {
    key: leaf("stream-janitor:lease", "Redis key of the leader lease", nonEmptyString),
    ttlMs: leaf(15000, "how long a crashed leader blocks take-over", duration),
    renewDeadlineMs: leaf(10000, "the leader stops acting if not renewed for this long", duration),
    retryPeriodMs: leaf(2000, "renew cadence; standby acquire cadence", duration),
    // See README "Sentinel" for the trade-off.
    waitReplicas: leaf(0, "> 0: WAIT for this many replicas after acquiring", integer(0, 100)),
    waitTimeoutMs: leaf(500, "bound on that WAIT; below retryPeriodMs", duration),
  },
  sweep: {
    intervalMs: leaf(30000, "time between sweeps", duration),
    batchSize: leaf(1000, "at most this many entries claimed per script call", integer(1, 10000)),
    maxScriptMs: leaf(
      2,
      "time budget of one script call; pages adapt to stay under it",
      durationBetween(1, 60000),
    ),
    maxEntriesPerGroup: leaf(100000, "claim budget per group and sweep", integer(1)),
    consumerName: leaf(
      "stream-janitor",
      "the janitor's own consumer inside each group",
      nonEmptyString,
    ),
  },
  // How the gauges are collected (README "HTTP and metrics").
  metrics: {
    perConsumer: leaf(
      false,
      "export per-consumer series (bounded by maxConsumersPerGroup)",
      boolean,
    ),
    maxConsumersPerGroup: leaf(50, "cap on per-consumer series per group", integer(1, 10000)),
    pelScanIntervalMs: leaf(
      60000,
      "cadence of the paged PEL scan (max idle, max deliveries)",
      duration,
    ),
    scrapeTimeoutMs: leaf(2000, "bound on the Redis reads done at scrape time", duration),
    scrapeReadWaitMs: leaf(
      500,
      "how long a scrape waits for its own read before it is answered with the last complete one",
      duration,
    ),
  },
  groups: leaf<unknown[]>([], "stream/group pairs to keep healthy", list),
  discover: leaf<unknown[]>([], "groups found by pattern instead of listed", patternList),
  discovery: {
    intervalMs: leaf(60000, "how often discover patterns are re-scanned", duration),
    maxGroups: leaf(10000, "cap on discovered groups", integer(1)),
  },
  status: {
    intervalMs: leaf(10000, "one status sample of every group per interval", duration),
    window: leaf(10, "samples the status verdict looks at", integer(2, 1000)),
    stuckAfterMs: leaf(
      0,
      "STUCK when the oldest pending entry idles longer; 0: 10 x the group's minIdleMs",
      durationBetween(0, MAX_DURATION_MS),
    ),
  },
  events: {
    stream: leaf("stream-janitor:events", 'advisory events stream ("" turns them off)', anyString),
    maxLen: leaf(10000, "approximate cap on the advisory events stream", integer(1)),
  },
  retention: leaf<unknown[]>([], "safe trimming per stream", {
    expected: "a list of {stream, maxLen, maxAgeMs}",
    test: (v) => Array.isArray(v),
  }),
} satisfies convict.Schema<ConvictShape>;

/** One element of `groups`. convict has no notion of array items, so loadConfig applies it. */
export const groupSchema = {
  stream: leaf("", "source stream", nonEmptyString, { required: true }),
  group: leaf("", "consumer group", nonEmptyString, { required: true }),
  minIdleMs: leaf(60000, "only entries idle at least this long are claimed", duration),
  maxDeliveries: leaf(5, "dead-letter once delivered this many times", integer(1)),
  action: leaf("requeue", "what to do with claimed entries", oneOf(GROUP_ACTIONS)),
  requeueStream: leaf("", "empty: the source stream", anyString),
  deadLetterStream: leaf("", "empty: a stream in the source's hash slot", anyString),
  deadLetterMaxLen: leaf(
    0,
    "0: never trimmed; > 0: approximate cap on the dead-letter stream, every entry it drops counted and logged",
    integer(0),
  ),
  retryLane: leaf(
    false,
    "requeue only: copies go to the group's own retry lane, {<stream>}:<group>:retry",
    boolean,
  ),
  reapConsumersIdleMs: leaf(
    0,
    "> 0: delete consumers that own nothing and were inactive this long (0: never)",
    durationBetween(0, MAX_DURATION_MS),
  ),
  backoffMs: leaf<number[]>(
    [],
    "claim thresholds by delivery count: an entry delivered d times waits max(minIdleMs, backoffMs[min(d, len) - 1])",
    durationList,
  ),
  backoffJitter: leaf(0, "0..0.5: per-entry spread of each threshold, stable per id", jitter),
  deadLetterAfterIdleMs: leaf(
    0,
    "> 0: an entry idle this long is dead-lettered (reason max-idle) whatever the action; monitor excepted (0: off)",
    durationBetween(0, MAX_DURATION_MS),
  ),
} satisfies SectionSpec;

/** One element of `retention` (checked by checkRetention, like groups by loadConfig). */
export const retentionSchema = {
  stream: leaf("", "stream to trim safely", nonEmptyString, { required: true }),
  maxLen: leaf(0, "keep about this many entries at most (0: no limit)", integer(0)),
  maxAgeMs: leaf(0, "drop entries older than this (0: no limit)", durationBetween(0)),
} satisfies SectionSpec;

/** One element of `discover`: globs, then the settings of a `groups` entry with their defaults. */
export const discoverSchema = {
  match: leaf("", "glob over stream key names (SCAN MATCH ... TYPE stream)", nonEmptyString, {
    required: true,
  }),
  groups: leaf("*", "glob over the group names of each matching stream", nonEmptyString),
  // The per-group settings of a `groups` entry, same defaults and checks.
  minIdleMs: groupSchema.minIdleMs,
  maxDeliveries: groupSchema.maxDeliveries,
  action: groupSchema.action,
  requeueStream: groupSchema.requeueStream,
  deadLetterStream: groupSchema.deadLetterStream,
  deadLetterMaxLen: groupSchema.deadLetterMaxLen,
  retryLane: groupSchema.retryLane,
  reapConsumersIdleMs: groupSchema.reapConsumersIdleMs,
  backoffMs: groupSchema.backoffMs,
  backoffJitter: groupSchema.backoffJitter,
  deadLetterAfterIdleMs: groupSchema.deadLetterAfterIdleMs,
} satisfies SectionSpec;

export function isLeaf(node: SchemaNode): node is LeafSpec {
  return Object.hasOwn(node, "default");
}

/** Every leaf of the top-level schema with its dotted path, nested sections included. */
export function schemaLeaves(): [path: string, spec: LeafSpec][] {
  const leaves: [string, LeafSpec][] = [];
  const visit = (prefix: string, node: SchemaNode): void => {
    if (isLeaf(node)) leaves.push([prefix, node]);
    else for (const [key, child] of Object.entries(node)) visit(`${prefix}.${key}`, child);
  };
  for (const [name, node] of Object.entries<SchemaNode>(janitorSchema)) visit(name, node);
  return leaves;
}
