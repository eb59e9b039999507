import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import convict from "convict";
import { parse as parseYaml } from "yaml";
import { ConfigError, configErrorFromConvict } from "./ConfigError.js";
import {
  checkCrossKeyRules,
  groupSchema,
  isLeaf,
  janitorSchema,
  schemaLeaves,
  type ConvictShape,
  type LeafSpec,
  type SectionSpec,
} from "./configSchema.js";
import type { GroupConfig, JanitorConfig } from "./types.js";
import { checkClusterSlots } from "../sweep/slotRule.js";

export interface LoadConfigOptions {
  /** `--config`; wins over STREAM_JANITOR_CONFIG. */
  configPath?: string | undefined;
  /** The environment to read overrides from (never the global process.env, for tests). */
  env: NodeJS.ProcessEnv;
}

type Mapping = Record<string, unknown>;

/**
 * Reads, merges (defaults < file < environment), validates and returns the configuration.
 * Every problem is thrown as a ConfigError naming the key, the value and what was expected.
 */
export async function loadConfig(options: LoadConfigOptions): Promise<JanitorConfig> {
  const { env } = options;
  const file = await readConfigFile(options.configPath, env.STREAM_JANITOR_CONFIG);
  const { sections, groups } = checkFileValues(file);
  checkNumericEnv(env);

  const merged = mergeWithConvict(sections, env);
  const config: JanitorConfig = { ...merged, groups };
  checkCrossKeyRules(config);
  // On Cluster one script can only touch keys of one slot: refuse groups that would need two.
  if (config.redis.mode === "cluster") checkClusterSlots(config.groups);
  if (config.redis.passwordFile !== "") {
    config.redis.password = await readPasswordFile(config.redis.passwordFile);
  }
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
  let text: string;
  try {
    text = (await readFile(path, "utf8")).replace(/^\uFEFF/u, "");
  } catch (error) {
    const expected = `a readable configuration file (${errorCode(error)})${named}`;
    throw new ConfigError(path, undefined, expected, { cause: error });
  }
  let parsed: unknown;
  try {
    parsed = format === "JSON" ? (JSON.parse(text) as unknown) : (parseYaml(text) as unknown);
  } catch (error) {
    throw new ConfigError(path, undefined, `valid ${format}: ${syntaxProblem(error, text)}`);
  }
  // An empty YAML file (or one whose every line is commented out) means "all defaults".
  if (parsed === null) return {};
  if (!isMapping(parsed)) {
    const sections = Object.keys(janitorSchema).join(", ");
    throw new ConfigError(path, undefined, `a mapping of sections (${sections}) at the top level`);
  }
  return parsed;
}

/**
 * Parser messages can quote the source (V8's JSON.parse does), and the source may hold a
 * password: keep only the position. yaml's first line is "<problem> at line L, column C:".
 */
function syntaxProblem(error: unknown, text: string): string {
  const message = error instanceof Error ? error.message : "";
  if (error instanceof Error && error.name === "YAMLParseError") {
    return (message.split("\n")[0] ?? "").replace(/:$/u, "");
  }
  const position = /at position (\d+)/u.exec(message)?.[1];
  if (position === undefined) return "syntax error";
  const before = text.slice(0, Number(position)).split("\n");
  return `syntax error at line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
}

/**
 * Checks what the file gave, before convict merges it: unknown keys (convict's strict mode
 * would report them too, but without the list of known keys), and types, because convict
 * silently turns `port: "80x"` into 80. Returns the sections for convict and the groups with
 * their defaults filled in.
 */
function checkFileValues(file: Mapping): { sections: Mapping; groups: GroupConfig[] } {
  const sections: Mapping = {};
  let groups: GroupConfig[] = [];
  for (const [name, value] of Object.entries(file)) {
    const node = knownKey<SectionSpec | LeafSpec>(janitorSchema, name, name, value, "section");
    // `groups:` or `redis:` with everything below commented out parses as null.
    if (value === null) continue;
    if (isLeaf(node)) {
      checkLeaf(node, name, value);
      groups = (value as unknown[]).map((group, index) => checkGroup(group, `groups[${index}]`));
    } else {
      if (!isMapping(value)) throw new ConfigError(name, value, `a mapping of ${name} settings`);
      for (const [key, leafValue] of Object.entries(value)) {
        const path = `${name}.${key}`;
        checkLeaf(knownKey(node, key, path, leafValue, `${name} key`), path, leafValue);
      }
      sections[name] = value;
    }
  }
  return { sections, groups };
}

function checkGroup(raw: unknown, path: string): GroupConfig {
  if (!isMapping(raw)) throw new ConfigError(path, raw, "a mapping with at least stream and group");
  const group: Mapping = {};
  for (const [key, spec] of Object.entries<LeafSpec>(groupSchema)) {
    if (spec.required === true && !Object.hasOwn(raw, key)) {
      throw new ConfigError(`${path}.${key}`, undefined, `${spec.expected} (required)`);
    }
    group[key] = spec.default;
  }
  for (const [key, value] of Object.entries(raw)) {
    const keyPath = `${path}.${key}`;
    checkLeaf(knownKey<LeafSpec>(groupSchema, key, keyPath, value, "group key"), keyPath, value);
    group[key] = value;
  }
  return group as unknown as GroupConfig;
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

function checkLeaf(spec: LeafSpec, path: string, value: unknown): void {
  if (!spec.test(value)) throw new ConfigError(path, value, spec.expected);
}

/** convict reads "80x" as 80 and "" as NaN: numbers from the environment must be all digits. */
function checkNumericEnv(env: NodeJS.ProcessEnv): void {
  for (const [path, spec] of schemaLeaves()) {
    const raw = spec.env === undefined ? undefined : env[spec.env];
    if (raw !== undefined && typeof spec.default === "number" && !/^\d+$/u.test(raw)) {
      throw new ConfigError(path, raw, `${spec.expected} (from ${String(spec.env)})`);
    }
  }
}

function mergeWithConvict(sections: Mapping, env: NodeJS.ProcessEnv): ConvictShape {
  // args: [] because convict would otherwise parse process.argv, which belongs to the CLI.
  const config = convict<ConvictShape>(janitorSchema, { env, args: [] });
  config.load(sections);
  const properties = config.getProperties();
  try {
    config.validate({ allowed: "strict" });
  } catch (error) {
    const translated = configErrorFromConvict(error, (key) => valueAt(properties, key));
    const envName = schemaLeaves().find(([path]) => path === translated.key)?.[1].env;
    if (envName === undefined || env[envName] === undefined) throw translated;
    const { key, value, expected } = translated;
    throw new ConfigError(key, value, `${expected} (from ${envName})`);
  }
  return properties;
}

function valueAt(root: unknown, dottedKey: string): unknown {
  return dottedKey.split(".").reduce<unknown>((node, part) => {
    return isMapping(node) && Object.hasOwn(node, part) ? node[part] : undefined;
  }, root);
}

async function readPasswordFile(path: string): Promise<string> {
  try {
    // Exactly one trailing newline: editors and `echo` add one, a password may end in another.
    return (await readFile(path, "utf8")).replace(/\r?\n$/u, "");
  } catch (error) {
    const expected = `a readable file holding the Redis password (${errorCode(error)})`;
    throw new ConfigError("redis.passwordFile", path, expected, { cause: error });
  }
}

function isMapping(value: unknown): value is Mapping {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function errorCode(error: unknown): string {
  const code = isMapping(error) ? error.code : undefined;
  return typeof code === "string" ? code : "unreadable";
}
