import type convict from "convict";
import { ConfigError, type ConfigProblems } from "./ConfigError.js";
import { defaultDeadLetterStream } from "../core/resolveGroup.js";
import { leaseTimingProblem } from "../core/leaseTimingRule.js";
import { durationExpected } from "./parseDuration.js";
import {
  GROUP_ACTIONS,
  REDIS_MODES,
  type DiscoverConfig,
  type GroupConfig,
  type JanitorConfig,
} from "../core/configTypes.js";

/** What a value must satisfy, in words (for ConfigError) and as a predicate. */
interface Check {
  readonly expected: string;
  readonly test: (value: unknown) => boolean;
}

/**
 * One configuration value. `format` is what convict runs; `test` and `expected` are the same
 * check kept apart so that loadConfig can run it on raw file values, before convict turns
 * numeric-looking strings into numbers, and report the key precisely.
 * (A type alias, not an interface, so that it is assignable to convict's indexed SchemaObj.)
 */
export type LeafSpec<T = unknown> = {
  default: T;
  doc: string;
  expected: string;
  test: (value: unknown) => boolean;
  format: (value: unknown) => void;
  env?: string;
  sensitive?: boolean;
  /** No usable default: the key must be given (group stream and group names). */
  required?: boolean;
};

export type SectionSpec = Readonly<Record<string, LeafSpec>>;

/** A section whose keys are leaves or further sections (`redis.tls`). */
export interface NestedSectionSpec {
  readonly [key: string]: LeafSpec | NestedSectionSpec;
}

export type SchemaNode = LeafSpec | NestedSectionSpec;

/** The convict view of the configuration: groups are a plain list, checked by loadConfig. */
export type ConvictShape = Omit<JanitorConfig, "groups" | "discover" | "retention"> & {
  groups: unknown[];
  discover: unknown[];
  retention: unknown[];
};

/** setTimeout silently turns longer delays into 1 ms, so durations used as timers stop here. */
const MAX_DURATION_MS = 2 ** 31 - 1;

const LOG_LEVELS: readonly string[] = [
  "fatal",
  "error",
  "warn",
  "info",
  "debug",
  "trace",
  "silent",
];

const anyString: Check = { expected: "a string", test: (v) => typeof v === "string" };

const nonEmptyString: Check = {
  expected: "a non-empty string",
  test: (v) => typeof v === "string" && v.length > 0,
};

function integer(min: number, max?: number): Check {
  return {
    expected: max === undefined ? `an integer >= ${min}` : `an integer between ${min} and ${max}`,
    test: (v) =>
      typeof v === "number" &&
      Number.isSafeInteger(v) &&
      v >= min &&
      (max === undefined || v <= max),
  };
}

/** A key ending in `Ms`: the file may give a unit too; loadConfig turns it into ms first. */
function durationBetween(min: number, max?: number): Check {
  return { expected: durationExpected(min, max), test: integer(min, max).test };
}

const duration = durationBetween(1, MAX_DURATION_MS);

/** `backoffMs`: a short list of durations, each one like a key ending in `Ms`. */
const durationList: Check = {
  expected: `a list of at most 100 durations, each ${durationExpected(1, MAX_DURATION_MS)}`,
  test: (v) => Array.isArray(v) && v.length <= 100 && v.every((item) => duration.test(item)),
};

/** `backoffJitter`: a fraction of each threshold, used in thousandths. */
const jitter: Check = {
  expected: "a number between 0 and 0.5 (used in steps of 0.001)",
  test: (v) => typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= 0.5,
};

function oneOf(values: readonly string[]): Check {
  return {
    expected: `one of ${values.join(", ")}`,
    test: (v) => typeof v === "string" && values.includes(v),
  };
}

/** ioredis decodes the user-info with decodeURIComponent, which throws URIError on a bare `%`. */
function userInfoDecodes(url: string): boolean {
  try {
    const parsed = new URL(url);
    decodeURIComponent(parsed.username);
    decodeURIComponent(parsed.password);
    return true;
  } catch {
    return false;
  }
}

// Lower-case schemes only: code elsewhere may decide on TLS by looking for "rediss://".
const redisUrl: Check = {
  expected: "a URL starting with redis://, rediss:// or unix:///",
  test: (v) =>
    typeof v === "string" &&
    (/^rediss?:\/\//u.test(v) || /^unix:\/\/\/./u.test(v)) &&
    URL.canParse(v),
};

// IPv6 in brackets ([::1]:26379), a name or an IPv4 address, then a port.
const HOST_PORT = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):(\d{1,5})$/iu;

const hostPorts: Check = {
  expected: 'a list of "host:port" strings',
  test: (v) =>
    Array.isArray(v) &&
    v.every((item) => {
      const port = typeof item === "string" ? HOST_PORT.exec(item)?.[2] : undefined;
      return port !== undefined && Number(port) >= 1 && Number(port) <= 65535;
    }),
};

const boolean: Check = { expected: "true or false", test: (v) => typeof v === "boolean" };
const list: Check = { expected: "a list of groups", test: (v) => Array.isArray(v) };
const patternList: Check = {
  expected: "a list of discover patterns",
  test: (v) => Array.isArray(v),
};

const file: Check = { expected: "a file path (empty: none)", test: anyString.test };

function leaf<T>(
  defaultValue: T,
  doc: string,
  check: Check,
  extra: { env?: string; sensitive?: boolean; required?: boolean } = {},
): LeafSpec<T> {
  return {
    default: defaultValue,
    doc,
    expected: check.expected,
    test: check.test,
    format: (value: unknown) => {
      if (!check.test(value)) throw new Error(check.expected);
    },
    ...extra,
  };
}

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

/**
 * The rules that span several keys, which neither convict nor a per-key check can express.
 * Sections that already had a problem are skipped: their values are partly defaults.
 */
export function checkCrossKeyRules(
  config: Pick<JanitorConfig, "lease" | "groups" | "redis"> &
    Partial<Pick<JanitorConfig, "discover">>,
  problems: ConfigProblems,
  skipSections: ReadonlySet<string> = new Set(),
): void {
  if (!skipSections.has("lease")) problems.check(() => checkLeaseRule(config.lease));
  if (!skipSections.has("redis") && URL.canParse(config.redis.url)) {
    if (!userInfoDecodes(config.redis.url)) {
      const expected =
        "a URL whose user name and password are percent-encoded (a % is written %25)";
      problems.add(new ConfigError("redis.url", config.redis.url, expected));
    }
  }
  if (!skipSections.has("lease")) problems.check(() => checkLeaseWaitRule(config.lease));
  checkGroupRules(config.groups, problems);
  checkDiscoverRules(config.discover ?? [], problems);
}

/** The dead-letter loop rule of groups, for what a pattern's settings alone can tell. */
function checkDiscoverRules(entries: readonly DiscoverConfig[], problems: ConfigProblems): void {
  entries.forEach((entry, index) => {
    problems.check(() => checkRetryLaneAction(entry, `discover[${index}]`));
    const { requeueStream, deadLetterStream } = entry;
    if (requeueStream !== "" && requeueStream === deadLetterStream) {
      const expected =
        "a stream other than the pattern's requeueStream (dead letters would be delivered again)";
      problems.add(
        new ConfigError(`discover[${index}].deadLetterStream`, deadLetterStream, expected),
      );
    }
  });
}

/** A retry lane holds requeued copies: only the requeue action makes any. */
function checkRetryLaneAction(
  settings: Pick<GroupConfig, "action" | "retryLane">,
  path: string,
): void {
  if (settings.retryLane === true && settings.action !== "requeue") {
    const expected = `false with action ${settings.action} (a retry lane is for action requeue)`;
    throw new ConfigError(`${path}.retryLane`, true, expected);
  }
}

/** The lease timing rule (the Lease checks the same), blaming a key by its full path. */
function checkLeaseRule(lease: JanitorConfig["lease"]): void {
  const problem = leaseTimingProblem(lease, (key) => `lease.${key}`);
  if (problem !== undefined) {
    throw new ConfigError(`lease.${problem.key}`, problem.value, problem.expected);
  }
}

/** The WAIT runs on the lease connection, whose commands time out after retryPeriodMs. */
function checkLeaseWaitRule(lease: JanitorConfig["lease"]): void {
  const { waitReplicas = 0, waitTimeoutMs = 0, retryPeriodMs } = lease;
  if (waitReplicas > 0 && waitTimeoutMs >= retryPeriodMs) {
    const expected = `less than lease.retryPeriodMs (${retryPeriodMs}) when lease.waitReplicas > 0`;
    throw new ConfigError("lease.waitTimeoutMs", waitTimeoutMs, expected);
  }
}

function checkGroupRules(groups: readonly GroupConfig[], problems: ConfigProblems): void {
  const seen = new Map<string, number>();
  groups.forEach((group, index) => {
    const path = `groups[${index}]`;
    const pair = JSON.stringify([group.stream, group.group]);
    const earlier = seen.get(pair);
    if (earlier !== undefined) {
      const expected = `a stream/group pair not configured already (groups[${earlier}] has it)`;
      problems.add(new ConfigError(path, { stream: group.stream, group: group.group }, expected));
      return;
    }
    seen.set(pair, index);
    problems.check(() => checkRetryLaneAction(group, path));
    // Dead letters written where the group (or its requeue target) reads would come back.
    const { deadLetterStream, stream, requeueStream, action } = group;
    const feedsBack =
      deadLetterStream === stream || (action === "requeue" && deadLetterStream === requeueStream);
    if (deadLetterStream !== "" && feedsBack) {
      const expected = `a stream other than the source stream and the requeue stream (dead letters would be delivered again)`;
      problems.add(new ConfigError(`${path}.deadLetterStream`, deadLetterStream, expected));
      return;
    }
    // The same loop the other way round: requeued copies landing among the dead letters.
    const deadLetters =
      deadLetterStream === "" ? defaultDeadLetterStream(stream) : deadLetterStream;
    if (requeueStream !== "" && requeueStream === deadLetters) {
      const expected = `a stream other than the group's dead-letter stream (${deadLetters})`;
      problems.add(new ConfigError(`${path}.requeueStream`, requeueStream, expected));
    }
  });
}
