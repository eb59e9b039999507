import { maskRedisUrl, SECRET_MASK } from "./formatEffectiveConfig.js";

/** Exit code of an invalid configuration (EX_CONFIG from sysexits.h; contract section 2). */
export const CONFIG_EXIT_CODE = 78;

// Matches misspelt keys too (`pasword`), so that a typo does not print the secret it holds.
const SECRET_KEY = /pas+w|pass|secret|token|credential|auth/iu;
const MAX_SHOWN = 120;

/**
 * An invalid configuration: names the key (dotted, `groups[1].maxDeliveries`), the value given
 * (secrets masked) and what was expected. The CLI exits with `exitCode`.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly exitCode = CONFIG_EXIT_CODE;
  readonly key: string;
  /** The offending value, masked if secret; undefined when there is none (unreadable file). */
  readonly value: unknown;
  readonly expected: string;

  constructor(key: string, value: unknown, expected: string, options?: ErrorOptions) {
    const shown = maskValue(key, value);
    const valuePart = shown === undefined ? "" : ` = ${render(shown)}`;
    super(`invalid configuration: ${key}${valuePart}: expected ${expected}`, options);
    this.key = key;
    this.value = shown;
    this.expected = expected;
  }
}

function maskValue(key: string, value: unknown): unknown {
  const name = key.slice(key.lastIndexOf(".") + 1);
  if (SECRET_KEY.test(name) && !/file$/iu.test(name) && value !== undefined && value !== "") {
    return SECRET_MASK;
  }
  // Any URL-looking string, whatever its key: `redis: redis://u:pw@host` is a plausible mistake.
  return typeof value === "string" && value.includes("://") ? maskRedisUrl(value) : value;
}

function render(value: unknown): string {
  let text: string;
  if (typeof value === "string") text = JSON.stringify(value);
  else if (typeof value === "number" || typeof value === "boolean") text = String(value);
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = Object.prototype.toString.call(value);
    }
  }
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
}

const UNDECLARED = /^configuration param '(.+)' not declared in the schema$/u;
const MISSING = /^configuration param '(.+)' missing from config/u;
const VALUE_SUFFIX = ": value was ";

/**
 * Turns the error convict's `validate()` throws (one string, one line per problem, in the form
 * `key: message[: value was JSON]`) into a ConfigError for its first problem. The value is
 * looked up again through `valueOf` rather than taken from the text, which convict only fills
 * for truthy, non-sensitive values. The convict error is not kept as `cause`: its text may hold
 * a URL with credentials.
 */
export function configErrorFromConvict(
  error: unknown,
  valueOf: (key: string) => unknown,
): ConfigError {
  const message = error instanceof Error ? error.message : String(error);
  const first = message.split("\n")[0] ?? "";
  const undeclared = UNDECLARED.exec(first)?.[1];
  if (undeclared !== undefined) {
    return new ConfigError(
      undeclared,
      valueOf(undeclared),
      "no such key (unknown keys are errors)",
    );
  }
  const missing = MISSING.exec(first)?.[1];
  if (missing !== undefined) {
    return new ConfigError(missing, undefined, "a value (its parent is not a mapping)");
  }
  const separator = first.indexOf(": ");
  if (separator <= 0) return new ConfigError("(configuration)", undefined, first);
  const key = first.slice(0, separator);
  let expected = first.slice(separator + 2);
  const valueAt = expected.lastIndexOf(VALUE_SUFFIX);
  if (valueAt >= 0) expected = expected.slice(0, valueAt);
  // convict's own formats say "must be an integer"; ours already read "an integer".
  return new ConfigError(key, valueOf(key), expected.replace(/^must be /u, "").trim());
}
