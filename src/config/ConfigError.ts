import { maskRedisUrl, SECRET_MASK } from "./formatEffectiveConfig.js";

/** Exit code of an invalid configuration (EX_CONFIG from sysexits.h; README "Running it"). */
const CONFIG_EXIT_CODE = 78;

// Matches misspelt keys too (`pasword`), so that a typo does not print the secret it holds.
const SECRET_KEY = /pas+w|pass|secret|token|credential|auth/iu;
const MAX_SHOWN = 120;

/** One problem of a configuration, secrets already masked. */
export interface ConfigProblem {
  readonly key: string;
  readonly value: unknown;
  readonly expected: string;
  /** `invalid configuration: key = value: expected ...` */
  readonly message: string;
}

/**
 * An invalid configuration: names the key (dotted, `groups[1].maxDeliveries`), the value given
 * (secrets masked) and what was expected. The CLI exits with `exitCode`. One error can carry
 * several problems (`problems`, one line each in the message) so that an operator fixes a file
 * in one round; `key`, `value` and `expected` are those of the first.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly exitCode = CONFIG_EXIT_CODE;
  readonly key: string;
  /** The offending value, masked if secret; undefined when there is none (unreadable file). */
  readonly value: unknown;
  readonly expected: string;
  readonly problems: readonly ConfigProblem[];

  /** `options.hint` ("did you mean minIdleMs?") follows `expected` in the message only. */
  constructor(
    key: string,
    value: unknown,
    expected: string,
    options?: ErrorOptions & { hint?: string },
  ) {
    const shown = maskValue(key, value);
    const valuePart = shown === undefined ? "" : ` = ${render(shown)}`;
    const hint = options?.hint === undefined ? "" : `; ${options.hint}`;
    const message = `invalid configuration: ${key}${valuePart}: expected ${expected}${hint}`;
    super(message, options);
    this.key = key;
    this.value = shown;
    this.expected = expected;
    this.problems = [{ key, value: shown, expected, message }];
  }

  /** One error for several problems (each error's own problems, in order). */
  static combine(errors: readonly ConfigError[]): ConfigError {
    const [first, ...rest] = errors;
    if (first === undefined) throw new Error("ConfigError.combine: no errors");
    if (rest.length === 0) return first;
    const combined = new ConfigError(first.key, first.value, first.expected);
    const problems = errors.flatMap((error) => error.problems);
    Object.defineProperty(combined, "problems", { value: problems });
    combined.message = problems.map((problem) => problem.message).join("\n");
    return combined;
  }
}

/**
 * Collects problems instead of stopping at the first: `check(() => ...)` runs a check and keeps
 * the ConfigError it throws (anything else is rethrown), `throwIfAny()` throws them together.
 */
export class ConfigProblems {
  private readonly errors: ConfigError[] = [];

  check<T>(run: () => T): T | undefined {
    try {
      return run();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      this.errors.push(error);
      return undefined;
    }
  }

  add(error: ConfigError): void {
    this.errors.push(error);
  }

  get count(): number {
    return this.errors.length;
  }

  throwIfAny(): void {
    if (this.errors.length > 0) throw ConfigError.combine(this.errors);
  }
}

function maskValue(key: string, value: unknown): unknown {
  const name = key.slice(key.lastIndexOf(".") + 1);
  if (SECRET_KEY.test(name) && !/file$/iu.test(name) && value !== undefined && value !== "") {
    return SECRET_MASK;
  }
  if (typeof value !== "string") return value;
  // Any URL-looking string, whatever its key: `redis: redis://u:pw@host` is a plausible mistake.
  if (value.includes("://")) return maskRedisUrl(value);
  // A malformed URL (`redis:/:hunter2@host`) still carries its password before the last "@".
  const scheme = /^[a-z][a-z0-9+.-]*:\/*/iu.exec(value)?.[0];
  const at = value.lastIndexOf("@");
  if ((scheme !== undefined || /url/iu.test(name)) && at >= 0) {
    return `${scheme ?? ""}${SECRET_MASK}${value.slice(at)}`;
  }
  return value;
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
 * `key: message[: value was JSON]`) into one ConfigError per problem. The value is looked up
 * again through `valueOf` rather than taken from the text, which convict only fills for truthy,
 * non-sensitive values. The convict error is not kept as `cause`: its text may hold a URL with
 * credentials.
 */
export function configErrorsFromConvict(
  error: unknown,
  valueOf: (key: string) => unknown,
): ConfigError[] {
  const message = error instanceof Error ? error.message : String(error);
  return message
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => configErrorFromConvictLine(line.trim(), valueOf));
}

/** The first problem of convict's error (kept for callers that want one). */
export function configErrorFromConvict(
  error: unknown,
  valueOf: (key: string) => unknown,
): ConfigError {
  return (
    configErrorsFromConvict(error, valueOf)[0] ??
    new ConfigError("(configuration)", undefined, "a valid configuration")
  );
}

function configErrorFromConvictLine(first: string, valueOf: (key: string) => unknown): ConfigError {
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
