/**
 * The pieces a configuration schema is made of: what a value must satisfy (a Check, in words and
 * as a predicate), the leaf built from it, and the checks the schema uses. The schema itself is
 * configSchema.ts; the rules spanning several keys are checkCrossKeyRules.ts.
 */
import { durationExpected } from "./parseDuration.js";

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

/** setTimeout silently turns longer delays into 1 ms, so durations used as timers stop here. */
export const MAX_DURATION_MS = 2 ** 31 - 1;

export const LOG_LEVELS: readonly string[] = [
  "fatal",
  "error",
  "warn",
  "info",
  "debug",
  "trace",
  "silent",
];

export const anyString: Check = { expected: "a string", test: (v) => typeof v === "string" };

export const nonEmptyString: Check = {
  expected: "a non-empty string",
  test: (v) => typeof v === "string" && v.length > 0,
};

export function integer(min: number, max?: number): Check {
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
export function durationBetween(min: number, max?: number): Check {
  return { expected: durationExpected(min, max), test: integer(min, max).test };
}

export const duration = durationBetween(1, MAX_DURATION_MS);

/** `backoffMs`: a short list of durations, each one like a key ending in `Ms`. */
export const durationList: Check = {
  expected: `a list of at most 100 durations, each ${durationExpected(1, MAX_DURATION_MS)}`,
  test: (v) => Array.isArray(v) && v.length <= 100 && v.every((item) => duration.test(item)),
};

/** `backoffJitter`: a fraction of each threshold, used in thousandths. */
export const jitter: Check = {
  expected: "a number between 0 and 0.5 (used in steps of 0.001)",
  test: (v) => typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= 0.5,
};

export function oneOf(values: readonly string[]): Check {
  return {
    expected: `one of ${values.join(", ")}`,
    test: (v) => typeof v === "string" && values.includes(v),
  };
}

/** ioredis decodes the user-info with decodeURIComponent, which throws URIError on a bare `%`. */
export function userInfoDecodes(url: string): boolean {
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
export const redisUrl: Check = {
  expected: "a URL starting with redis://, rediss:// or unix:///",
  test: (v) =>
    typeof v === "string" &&
    (/^rediss?:\/\//u.test(v) || /^unix:\/\/\/./u.test(v)) &&
    URL.canParse(v),
};

// IPv6 in brackets ([::1]:26379), a name or an IPv4 address, then a port.
const HOST_PORT = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):(\d{1,5})$/iu;

export const hostPorts: Check = {
  expected: 'a list of "host:port" strings',
  test: (v) =>
    Array.isArray(v) &&
    v.every((item) => {
      const port = typeof item === "string" ? HOST_PORT.exec(item)?.[2] : undefined;
      return port !== undefined && Number(port) >= 1 && Number(port) <= 65535;
    }),
};

export const boolean: Check = { expected: "true or false", test: (v) => typeof v === "boolean" };
export const list: Check = { expected: "a list of groups", test: (v) => Array.isArray(v) };
export const patternList: Check = {
  expected: "a list of discover patterns",
  test: (v) => Array.isArray(v),
};

export const file: Check = { expected: "a file path (empty: none)", test: anyString.test };

export function leaf<T>(
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
