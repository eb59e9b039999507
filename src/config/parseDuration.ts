/** Milliseconds per unit of a duration string. */
const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** The accepted forms, in words, for error messages (config keys and command-line options). */
export const DURATION_FORM =
  "a duration: integer milliseconds, or an integer with a unit (500ms, 30s, 5m, 2h, 7d)";

/** What a configuration key ending in `Ms` expects, with its range. */
export function durationExpected(min: number, max?: number): string {
  const range = max === undefined ? `>= ${min}` : `between ${min} and ${max}`;
  return `an integer number of milliseconds ${range}, or the same with a unit (500ms, 30s, 5m, 2h, 7d)`;
}

/**
 * The file's durations in milliseconds: every key ending in `Ms` (README "Configuration"), at any
 * depth (sections, `groups`, `discover`, `retention` entries; lists such as `backoffMs`), whose
 * value parses as a duration. Anything else is left as it is, for the schema's checks to report
 * with the key, the value and the expected form.
 */
export function durationsInMs(value: unknown, key = ""): unknown {
  if (Array.isArray(value)) return value.map((item) => durationsInMs(item, key));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([name, child]) => [name, durationsInMs(child, name)]),
    );
  }
  if (key.endsWith("Ms") && typeof value === "string") return parseDuration(value) ?? value;
  return value;
}

/**
 * The one parser of durations, for the configuration (every key ending in `Ms`) and for the
 * command line (`--older-than`, `--idle`, `--max-age` and their `-ms` spellings): an integer
 * number of milliseconds, or a string of digits with an optional unit. Fractions and spaces are
 * refused rather than guessed at. Returns undefined for anything else.
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === "number") {
    return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  }
  if (typeof value !== "string") return undefined;
  const match = /^(\d+)(ms|s|m|h|d)?$/u.exec(value);
  if (match === null) return undefined;
  const ms = Number(match[1]) * (UNIT_MS[match[2] ?? "ms"] ?? 1);
  return Number.isSafeInteger(ms) ? ms : undefined;
}
