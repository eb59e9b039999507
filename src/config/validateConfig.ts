import { convict } from "./convict.js";
import { ConfigError, ConfigProblems, configErrorsFromConvict } from "./ConfigError.js";
import { checkEventsStream } from "./checkEventsStream.js";
import { checkKeyRoles } from "./checkKeyRoles.js";
import { janitorSchema, schemaLeaves, type ConvictShape } from "./configSchema.js";
import { checkCrossKeyRules } from "./checkCrossKeyRules.js";
import { checkFileValues, isMapping } from "./checkFileValues.js";
import { checkRedisRules } from "./checkRedisSettings.js";
import { checkHttpAuthRules } from "./httpCredentials.js";
import { checkActionsNeedOperators, takeHttpExtras } from "./httpRoles.js";
import { clusterSlotProblems } from "./clusterSlotProblems.js";
import { durationsInMs } from "./parseDuration.js";
import type { JanitorConfig } from "../core/configTypes.js";

type Mapping = Record<string, unknown>;

/**
 * Validates a configuration as a file would give it (durations may carry a unit, "30s"), with
 * `env`'s STREAM_JANITOR_* overrides, and returns the effective configuration: defaults < input <
 * environment. Pure: reads no file and asks no resolver (loadConfig adds those checks: http.host
 * resolves, the password, TLS and secret files are readable). Throws one ConfigError listing
 * every problem, as loadConfig does.
 */
export function validateConfig(
  input: Readonly<Mapping>,
  env: NodeJS.ProcessEnv = {},
): JanitorConfig {
  const problems = new ConfigProblems();
  const { config, badSections } = checkConfig(input, env, problems);
  if (!badSections.has("redis")) problems.check(() => checkRedisRules(config.redis));
  problems.throwIfAny();
  return config;
}

/**
 * The checks of validateConfig, problems collected into `problems` rather than thrown (loadConfig
 * adds its own to the same list), and the sections that had one: later checks skip them.
 */
export function checkConfig(
  input: Readonly<Mapping>,
  env: NodeJS.ProcessEnv,
  problems: ConfigProblems,
): { config: JanitorConfig; badSections: ReadonlySet<string> } {
  // Durations may carry a unit ("30s"): in ms before any check, so every check sees numbers.
  const extras = takeHttpExtras(durationsInMs(input) as Mapping, problems);
  const { file } = extras;
  const { sections, groups, discover, retention, badSections } = checkFileValues(file, problems);
  const badEnv = checkNumericEnv(env, problems);

  const merged = mergeWithConvict(sections, env, badEnv, problems);
  const config: JanitorConfig = { ...merged, groups, discover, retention };
  if (extras.roles !== undefined) config.http.auth.roles = extras.roles;
  if (extras.actions !== undefined) config.http.ui.actions = extras.actions;
  checkCrossKeyRules(config, problems, badSections);
  if (!badSections.has("events")) checkEventsStream(config, problems);
  const roleSections = ["groups", "discover", "events", "lease"];
  if (!roleSections.some((name) => badSections.has(name))) checkKeyRoles(config, problems);
  if (!badSections.has("http")) {
    problems.check(() => checkHttpAuthRules(config.http.auth));
    if (extras.bad !== true) problems.check(() => checkActionsNeedOperators(config.http));
  }
  // On Cluster one script can only touch keys of one slot: refuse groups that would need two.
  // (Only on a clean groups list: a dropped entry would shift the indexes the problems name.)
  if (config.redis.mode === "cluster" && !badSections.has("groups")) {
    for (const error of clusterSlotProblems(config.groups)) problems.add(error);
  }
  return { config, badSections };
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

function valueAt(root: unknown, dottedKey: string): unknown {
  return dottedKey.split(".").reduce<unknown>((node, part) => {
    return isMapping(node) && Object.hasOwn(node, part) ? node[part] : undefined;
  }, root);
}
