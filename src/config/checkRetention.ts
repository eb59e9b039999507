import { ConfigError } from "./ConfigError.js";
import { retentionSchema, type LeafSpec } from "./configSchema.js";
import type { RetentionConfig } from "../core/configTypes.js";

type Mapping = Record<string, unknown>;

function isMapping(value: unknown): value is Mapping {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The `retention` list: each entry checked key by key (convict has no notion of list items),
 * defaults filled in. A stream listed twice, or an entry that limits nothing, is an error: the
 * operator meant something that would silently not happen.
 */
export function checkRetention(raw: unknown): RetentionConfig[] {
  if (raw === null || raw === undefined) return [];
  if (!Array.isArray(raw)) {
    throw new ConfigError("retention", raw, "a list of {stream, maxLen, maxAgeMs}");
  }
  const seen = new Map<string, number>();
  return raw.map((item: unknown, index) => {
    const path = `retention[${index}]`;
    if (!isMapping(item)) throw new ConfigError(path, item, "a mapping with at least stream");
    const entry: Mapping = {};
    for (const [key, spec] of Object.entries<LeafSpec>(retentionSchema)) {
      if (spec.required === true && !Object.hasOwn(item, key)) {
        throw new ConfigError(`${path}.${key}`, undefined, `${spec.expected} (required)`);
      }
      entry[key] = spec.default;
    }
    for (const [key, value] of Object.entries(item)) {
      const spec = Object.hasOwn(retentionSchema, key)
        ? (retentionSchema as Readonly<Record<string, LeafSpec>>)[key]
        : undefined;
      if (spec === undefined) {
        const known = Object.keys(retentionSchema).join(", ");
        throw new ConfigError(`${path}.${key}`, value, `a known retention key: one of ${known}`);
      }
      if (!spec.test(value)) throw new ConfigError(`${path}.${key}`, value, spec.expected);
      entry[key] = value;
    }
    const retention = entry as unknown as RetentionConfig;
    if (retention.maxLen === 0 && retention.maxAgeMs === 0) {
      throw new ConfigError(path, item, "maxLen or maxAgeMs (or both) greater than 0");
    }
    const earlier = seen.get(retention.stream);
    if (earlier !== undefined) {
      const expected = `a stream not listed already (retention[${earlier}] has it)`;
      throw new ConfigError(`${path}.stream`, retention.stream, expected);
    }
    seen.set(retention.stream, index);
    return retention;
  });
}
