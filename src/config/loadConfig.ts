import { withTimeout } from "../core/withTimeout.js";
import { lookup } from "node:dns/promises";
import { extname } from "node:path";
import type { Document } from "yaml";
import { ConfigError, ConfigProblems } from "./ConfigError.js";
import { janitorSchema } from "./configSchema.js";
import { isMapping } from "./checkFileValues.js";
import { findDuplicateJsonKey } from "./findDuplicateJsonKey.js";
import { MAX_CONFIG_NESTING, nestsDeeperThan } from "./nestingDepth.js";
import { CONFIG_FILE_MAX_BYTES, readSmallFile, SECRET_FILE_MAX_BYTES } from "./readSmallFile.js";
import { checkRedisSettings } from "./checkRedisSettings.js";
import { readHttpAccess } from "./httpCredentials.js";
import type { JanitorConfig } from "../core/configTypes.js";
import { checkConfig } from "./validateConfig.js";

export interface LoadConfigOptions {
  /** `--config`; wins over STREAM_JANITOR_CONFIG. */
  configPath?: string | undefined;
  /** The environment to read overrides from (never the global process.env, for tests). */
  env: NodeJS.ProcessEnv;
}

type Mapping = Record<string, unknown>;

/** How long http.host may take to resolve before it counts as not resolving. */
const HOST_LOOKUP_TIMEOUT_MS = 5000;

/**
 * Reads and parses the file (YAML or JSON), validates it with the environment's overrides as
 * validateConfig does (defaults < file < environment), checks what needs I/O (http.host
 * resolves; password, secret and TLS files are readable) and returns the configuration.
 * Problems are thrown as one ConfigError listing every problem found (each naming the key, the
 * value and what was expected), so an operator fixes a file in one round. Only a file that
 * cannot be read or parsed stops the checks at once.
 */
export async function loadConfig(options: LoadConfigOptions): Promise<JanitorConfig> {
  const { env } = options;
  const file = await readConfigFile(options.configPath, env.STREAM_JANITOR_CONFIG);
  const problems = new ConfigProblems();
  const { config, badSections } = checkConfig(file, env, problems);
  if (!badSections.has("http")) {
    const hostProblem = await checkHostResolves(config.http.host);
    if (hostProblem !== undefined) problems.add(hostProblem);
  }
  if (config.redis.passwordFile !== "") {
    const read = await readSmallFile(config.redis.passwordFile, SECRET_FILE_MAX_BYTES);
    if (read.ok) {
      // Exactly one trailing newline: editors and `echo` add one, a password may end in another.
      config.redis.password = read.text.replace(/\r?\n$/u, "");
    } else {
      const expected = read.problem.replace(
        /^a readable file/u,
        "a readable file holding the Redis password",
      );
      problems.add(new ConfigError("redis.passwordFile", config.redis.passwordFile, expected));
    }
  }
  const { auth } = config.http;
  if (!badSections.has("http") && (auth.bearerTokenFile === "" || auth.basicAuthFile === "")) {
    // Read now so that a bad file exits 78; the HTTP server reads it again (and at each SIGHUP).
    await readHttpAccess(auth).catch((error: unknown) => {
      if (!(error instanceof ConfigError)) throw error;
      problems.add(error);
    });
  }
  if (!badSections.has("redis")) {
    // The redis.* rules, then the files they name (validateConfig checks the rules alone).
    await checkRedisSettings(config.redis).catch((error: unknown) => {
      if (!(error instanceof ConfigError)) throw error;
      problems.add(error);
    });
  }
  problems.throwIfAny();
  return config;
}

async function readConfigFile(
  configPath: string | undefined,
  fromEnv: string | undefined,
): Promise<Mapping> {
  const viaEnv = configPath === undefined || configPath === "";
  const path = viaEnv ? fromEnv : configPath;
  if (path === undefined || path === "") return {};
  const named = viaEnv ? " (named by STREAM_JANITOR_CONFIG)" : "";

  const extension = extname(path).toLowerCase();
  const format =
    extension === ".json" ? "JSON" : [".yaml", ".yml"].includes(extension) ? "YAML" : "";
  if (format === "") {
    throw new ConfigError(path, undefined, `a file ending in .yaml, .yml or .json${named}`);
  }
  const read = await readSmallFile(path, CONFIG_FILE_MAX_BYTES);
  if (!read.ok) {
    const expected = read.problem.replace(/^a readable file/u, "a readable configuration file");
    throw new ConfigError(path, undefined, `${expected}${named}`);
  }
  const text = read.text.replace(/^\uFEFF/u, "");
  const parsed = format === "JSON" ? parseJson(text) : await parseYamlText(text);
  if ("problem" in parsed) {
    throw new ConfigError(path, undefined, `valid ${format}: ${parsed.problem}`);
  }
  if ("tooDeep" in parsed || nestsDeeperThan(parsed.value, MAX_CONFIG_NESTING)) {
    throw new ConfigError(path, undefined, TOO_DEEP);
  }
  // An empty YAML file (or one whose every line is commented out) means "all defaults".
  if (parsed.value === null || parsed.value === undefined) return {};
  if (!isMapping(parsed.value)) {
    const sections = Object.keys(janitorSchema).join(", ");
    throw new ConfigError(path, undefined, `a mapping of sections (${sections}) at the top level`);
  }
  return parsed.value;
}

type Parsed = { value: unknown } | { problem: string } | { tooDeep: true };

const TOO_DEEP =
  `at most ${MAX_CONFIG_NESTING} levels of nested arrays and mappings ` +
  "(this file nests deeper; a configuration needs about 5)";

/** The parsers recurse: a file nested 100,000 deep overflows their stack. */
function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/iu.test(error.message);
}

/**
 * V8's messages quote the source, and the source may hold a password: keep only the position.
 * A key given twice is refused, as YAML refuses it (JSON.parse would keep the last one).
 */
function parseJson(text: string): Parsed {
  try {
    const value = JSON.parse(text) as unknown;
    const duplicate = findDuplicateJsonKey(text);
    if (duplicate === undefined) return { value };
    const { path, firstLine, secondLine } = duplicate;
    return {
      problem: `${path} is given twice (lines ${firstLine} and ${secondLine}); give each key once`,
    };
  } catch (error) {
    if (isStackOverflow(error)) return { tooDeep: true };
    const message = error instanceof Error ? error.message : "";
    const position = /at position (\d+)/u.exec(message)?.[1];
    if (position === undefined) return { problem: "syntax error" };
    const before = text.slice(0, Number(position)).split("\n");
    const column = (before.at(-1)?.length ?? 0) + 1;
    return { problem: `syntax error at line ${before.length}, column ${column}` };
  }
}

// A key that names a secret (misspelt too), at the start of a YAML line.
const SECRET_LINE =
  /^\s*-?\s*["']?[\w-]*(pas+w|pass|secret|token|credential|auth)[\w-]*["']?\s*:/imu;

/**
 * yaml's messages quote the source ("Unresolved tag: !s3cret"). Its warnings are problems too:
 * `password: !s3cret` would otherwise become an empty password with a warning on stderr that
 * quotes it. The message is shown only when no secret key appears up to the faulty line;
 * otherwise only its code and position.
 */
async function parseYamlText(text: string): Promise<Parsed> {
  // Imported here: a JSON configuration (most operator commands, the tests) never needs it.
  const { parseDocument } = await import("yaml");
  const document = parseDocument(text, { logLevel: "silent", uniqueKeys: true });
  const [first] = [...document.errors, ...document.warnings];
  if (first === undefined) return documentValue(document);
  // yaml reports its own stack overflow as a parse error at the place it gave up.
  if (/maximum call stack/iu.test(first.message)) return { tooDeep: true };
  const position = first.linePos?.[0];
  const where = position === undefined ? "" : ` at line ${position.line}, column ${position.col}`;
  const upToFault = text
    .split("\n")
    .slice(0, position?.line ?? Number.MAX_SAFE_INTEGER)
    .join("\n");
  if (SECRET_LINE.test(upToFault)) {
    return { problem: `${first.code}${where} (details not shown: the file holds a secret)` };
  }
  const summary = (first.message.split("\n")[0] ?? "").replace(/:$/u, "");
  return { problem: summary };
}

/**
 * yaml refuses to expand an anchor used more than 100 times (its maxAliasCount, counting the
 * aliases inside the anchored node too) by throwing a ReferenceError from toJS(): a "billion
 * laughs" file would otherwise take the memory. The default stays: it is what bounds the work.
 */
function documentValue(document: Document): Parsed {
  try {
    return { value: document.toJS() as unknown };
  } catch (error) {
    if (isStackOverflow(error)) return { tooDeep: true };
    if (!(error instanceof ReferenceError) || !/excessive alias count/iu.test(error.message)) {
      throw error;
    }
    return {
      problem:
        'its aliases expand too much (more than 100 uses of an anchor, as in a "billion laughs" file); write the values out instead of aliasing them',
    };
  }
}

/** A host that does not resolve would fail only when the HTTP server binds: say so now. */
async function checkHostResolves(host: string): Promise<ConfigError | undefined> {
  const looked = lookup(host).then(
    () => undefined,
    (error: unknown) => {
      const code = (error as { code?: unknown }).code;
      return typeof code === "string" ? code : "lookup failed";
    },
  );
  const outcome = await withTimeout(looked, HOST_LOOKUP_TIMEOUT_MS, () => "ETIMEOUT");
  if (outcome === undefined) return undefined;
  return new ConfigError(
    "http.host",
    host,
    `an IP address or a host name that resolves (lookup failed: ${outcome})`,
  );
}
