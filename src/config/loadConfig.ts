import { lookup } from "node:dns/promises";
import { extname } from "node:path";
import convict from "convict";
import type { Document } from "yaml";
import { ConfigError, ConfigProblems, configErrorsFromConvict } from "./ConfigError.js";
import {
  checkCrossKeyRules,
  discoverSchema,
  groupSchema,
  isLeaf,
  janitorSchema,
  schemaLeaves,
  type ConvictShape,
  type LeafSpec,
  type NestedSectionSpec,
  type SchemaNode,
} from "./configSchema.js";
import { findDuplicateJsonKey } from "./findDuplicateJsonKey.js";
import { CONFIG_FILE_MAX_BYTES, readSmallFile, SECRET_FILE_MAX_BYTES } from "./readSmallFile.js";
import { durationsInMs } from "./parseDuration.js";
import { checkRedisSettings } from "./checkRedisSettings.js";
import { checkRetention } from "./checkRetention.js";
import type {
  DiscoverConfig,
  GroupConfig,
  JanitorConfig,
  RetentionConfig,
} from "../core/configTypes.js";
import { clusterSlotProblems } from "./clusterSlotProblems.js";

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
 * Reads, merges (defaults < file < environment), validates and returns the configuration.
 * Problems are thrown as one ConfigError listing every problem found (each naming the key, the
 * value and what was expected), so an operator fixes a file in one round. Only a file that
 * cannot be read or parsed stops the checks at once.
 */
export async function loadConfig(options: LoadConfigOptions): Promise<JanitorConfig> {
  const { env } = options;
  // Durations may carry a unit ("30s"): in ms before any check, so every check sees numbers.
  const file = durationsInMs(
    await readConfigFile(options.configPath, env.STREAM_JANITOR_CONFIG),
  ) as Mapping;
  const problems = new ConfigProblems();
  const { sections, groups, discover, retention, badSections } = checkFileValues(file, problems);
  const badEnv = checkNumericEnv(env, problems);

  const merged = mergeWithConvict(sections, env, badEnv, problems);
  const config: JanitorConfig = { ...merged, groups, discover, retention };
  checkCrossKeyRules(config, problems, badSections);
  // On Cluster one script can only touch keys of one slot: refuse groups that would need two.
  // (Only on a clean groups list: a dropped entry would shift the indexes the problems name.)
  if (config.redis.mode === "cluster" && !badSections.has("groups")) {
    for (const error of clusterSlotProblems(config.groups)) problems.add(error);
  }
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
  if (!badSections.has("redis")) {
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
  // An empty YAML file (or one whose every line is commented out) means "all defaults".
  if (parsed.value === null || parsed.value === undefined) return {};
  if (!isMapping(parsed.value)) {
    const sections = Object.keys(janitorSchema).join(", ");
    throw new ConfigError(path, undefined, `a mapping of sections (${sections}) at the top level`);
  }
  return parsed.value;
}

type Parsed = { value: unknown } | { problem: string };

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
    if (!(error instanceof ReferenceError) || !/excessive alias count/iu.test(error.message)) {
      throw error;
    }
    return {
      problem:
        'its aliases expand too much (more than 100 uses of an anchor, as in a "billion laughs" file); write the values out instead of aliasing them',
    };
  }
}

/**
 * Checks what the file gave, before convict merges it: unknown keys (convict's strict mode
 * would report them too, but without the list of known keys), and types, because convict
 * silently turns `port: "80x"` into 80. Returns the sections for convict (without the keys
 * that failed, so convict does not report them twice) and the groups with their defaults.
 */
function checkFileValues(
  file: Mapping,
  problems: ConfigProblems,
): {
  sections: Mapping;
  groups: GroupConfig[];
  discover: DiscoverConfig[];
  retention: RetentionConfig[];
  badSections: Set<string>;
} {
  const sections: Mapping = {};
  const badSections = new Set<string>();
  let groups: GroupConfig[] = [];
  let discover: DiscoverConfig[] = [];
  let retention: RetentionConfig[] = [];
  for (const [name, value] of Object.entries(file)) {
    const before = problems.count;
    const node = problems.check(() =>
      knownKey<SchemaNode>(janitorSchema, name, name, value, "section"),
    );
    // `groups:` or `redis:` with everything below commented out parses as null.
    if (node === undefined || value === null) continue;
    if (name === "retention") {
      retention = problems.check(() => checkRetention(value)) ?? [];
    } else if (isLeaf(node)) {
      if (problems.check(() => checkLeaf(node, name, value)) === undefined) {
        badSections.add(name);
        continue;
      }
      // The two list sections: `groups` and `discover`, each element checked like a section.
      const entries = (value as unknown[]).flatMap((entry, index) => {
        const spec = name === "discover" ? discoverSchema : groupSchema;
        const checked = checkEntry(spec, entry, `${name}[${index}]`, problems);
        return checked === undefined ? [] : [checked];
      });
      if (name === "discover") discover = entries as unknown as DiscoverConfig[];
      else groups = entries as unknown as GroupConfig[];
    } else {
      const good = checkSection(node, name, value, problems);
      if (good !== undefined) sections[name] = good;
    }
    if (problems.count > before) badSections.add(name);
  }
  return { sections, groups, discover, retention, badSections };
}

/**
 * A section's keys, recursively for nested sections (`redis.tls`): every problem is collected,
 * and only the keys that passed are returned for convict (which would report the others twice).
 */
function checkSection(
  node: NestedSectionSpec,
  path: string,
  value: unknown,
  problems: ConfigProblems,
): Mapping | undefined {
  if (!isMapping(value)) {
    problems.add(new ConfigError(path, value, `a mapping of ${path} settings`));
    return undefined;
  }
  const good: Mapping = {};
  for (const [key, child] of Object.entries(value)) {
    const childPath = `${path}.${key}`;
    const spec = problems.check(() =>
      knownKey<SchemaNode>(node, key, childPath, child, `${path} key`),
    );
    if (spec === undefined) continue;
    if (isLeaf(spec)) {
      if (problems.check(() => checkLeaf(spec, childPath, child)) !== undefined) good[key] = child;
    } else if (child !== null) {
      // `tls:` with everything below commented out parses as null: the defaults apply.
      const nested = checkSection(spec, childPath, child, problems);
      if (nested !== undefined) good[key] = nested;
    }
  }
  return good;
}

function checkEntry(
  schema: Readonly<Record<string, LeafSpec>>,
  raw: unknown,
  path: string,
  problems: ConfigProblems,
): Mapping | undefined {
  const required = Object.entries(schema)
    .filter(([, spec]) => spec.required === true)
    .map(([key]) => key);
  if (!isMapping(raw)) {
    problems.add(new ConfigError(path, raw, `a mapping with at least ${required.join(" and ")}`));
    return undefined;
  }
  const before = problems.count;
  const group: Mapping = {};
  for (const [key, spec] of Object.entries<LeafSpec>(schema)) {
    if (spec.required === true && !Object.hasOwn(raw, key)) {
      problems.add(new ConfigError(`${path}.${key}`, undefined, `${spec.expected} (required)`));
    }
    group[key] = spec.default;
  }
  for (const [key, value] of Object.entries(raw)) {
    const keyPath = `${path}.${key}`;
    problems.check(() => {
      const what = schema === discoverSchema ? "discover key" : "group key";
      checkLeaf(knownKey<LeafSpec>(schema, key, keyPath, value, what), keyPath, value);
      group[key] = value;
    });
  }
  return problems.count > before ? undefined : group;
}

function knownKey<T>(
  spec: Readonly<Record<string, T>>,
  key: string,
  path: string,
  value: unknown,
  what: string,
): T {
  const node = Object.hasOwn(spec, key) ? spec[key] : undefined;
  if (node === undefined) {
    throw new ConfigError(path, value, `a known ${what}: one of ${Object.keys(spec).join(", ")}`);
  }
  return node;
}

function checkLeaf(spec: LeafSpec, path: string, value: unknown): true {
  if (!spec.test(value)) throw new ConfigError(path, value, spec.expected);
  return true;
}

/**
 * convict reads "80x" as 80 and "" as NaN: numbers from the environment must be all digits.
 * Returns the names of the variables that failed, which convict must then not read.
 */
function checkNumericEnv(env: NodeJS.ProcessEnv, problems: ConfigProblems): Set<string> {
  const bad = new Set<string>();
  for (const [path, spec] of schemaLeaves()) {
    const raw = spec.env === undefined ? undefined : env[spec.env];
    if (raw !== undefined && typeof spec.default === "number" && !/^\d+$/u.test(raw)) {
      problems.add(new ConfigError(path, raw, `${spec.expected} (from ${String(spec.env)})`));
      bad.add(String(spec.env));
    }
  }
  return bad;
}

function mergeWithConvict(
  sections: Mapping,
  env: NodeJS.ProcessEnv,
  badEnv: ReadonlySet<string>,
  problems: ConfigProblems,
): ConvictShape {
  const usableEnv = Object.fromEntries(Object.entries(env).filter(([name]) => !badEnv.has(name)));
  // args: [] because convict would otherwise parse process.argv, which belongs to the CLI.
  const config = convict<ConvictShape>(janitorSchema, { env: usableEnv, args: [] });
  config.load(sections);
  const properties = config.getProperties();
  try {
    config.validate({ allowed: "strict" });
  } catch (error) {
    for (const translated of configErrorsFromConvict(error, (key) => valueAt(properties, key))) {
      const envName = schemaLeaves().find(([path]) => path === translated.key)?.[1].env;
      if (envName === undefined || env[envName] === undefined) {
        problems.add(translated);
        continue;
      }
      const { key, value, expected } = translated;
      problems.add(new ConfigError(key, value, `${expected} (from ${envName})`));
    }
  }
  return properties;
}

/** A host that does not resolve would fail only when the HTTP server binds: say so now. */
async function checkHostResolves(host: string): Promise<ConfigError | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve("ETIMEOUT"), HOST_LOOKUP_TIMEOUT_MS);
  });
  const outcome = await Promise.race([
    lookup(host).then(
      () => undefined,
      (error: unknown) => {
        const code = (error as { code?: unknown }).code;
        return typeof code === "string" ? code : "lookup failed";
      },
    ),
    timeout,
  ]);
  clearTimeout(timer);
  if (outcome === undefined) return undefined;
  return new ConfigError(
    "http.host",
    host,
    `an IP address or a host name that resolves (lookup failed: ${outcome})`,
  );
}

function valueAt(root: unknown, dottedKey: string): unknown {
  return dottedKey.split(".").reduce<unknown>((node, part) => {
    return isMapping(node) && Object.hasOwn(node, part) ? node[part] : undefined;
  }, root);
}

function isMapping(value: unknown): value is Mapping {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
