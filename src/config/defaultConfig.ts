import type { GroupConfig, JanitorConfig, RedisConfig } from "../core/configTypes.js";
import { groupSchema, isLeaf, janitorSchema, type SchemaNode } from "./configSchema.js";

/** A section's defaults, nested sections included; fresh values, so callers may change them. */
function defaultsOf(node: SchemaNode): unknown {
  if (isLeaf(node)) return structuredClone(node.default);
  return Object.fromEntries(Object.entries(node).map(([key, child]) => [key, defaultsOf(child)]));
}

/**
 * The configuration an empty file gives (README "Configuration"): every value is the default of
 * configSchema, where each default is defined, once. A fresh object at each call.
 */
export function defaultConfig(): JanitorConfig {
  return defaultsOf(janitorSchema) as JanitorConfig;
}

/** A `groups` entry for `stream` and `group` with every other setting at its default. */
export function defaultGroupConfig(stream: string, group: string): GroupConfig {
  const defaults = Object.fromEntries(
    Object.entries(groupSchema).map(([key, spec]) => [key, structuredClone(spec.default)]),
  ) as unknown as GroupConfig;
  return { ...defaults, stream, group };
}

/** A standalone, plain-TCP connection to `url` with no credentials: redis.* at its defaults. */
export function plainRedisConfig(url: string): RedisConfig {
  return { ...defaultConfig().redis, url };
}
