import { ConfigError, type ConfigProblems } from "./ConfigError.js";
import {
  discoverSchema,
  groupSchema,
  isLeaf,
  janitorSchema,
  type LeafSpec,
  type NestedSectionSpec,
  type SchemaNode,
} from "./configSchema.js";
import { checkRetention } from "./checkRetention.js";
import type { DiscoverConfig, GroupConfig, RetentionConfig } from "../core/configTypes.js";
import { nearestName } from "../core/nearestName.js";

type Mapping = Record<string, unknown>;

/**
 * Checks what the file gave, before convict merges it: unknown keys (convict's strict mode
 * would report them too, but without the list of known keys), and types, because convict
 * silently turns `port: "80x"` into 80. Returns the sections for convict (without the keys
 * that failed, so convict does not report them twice) and the groups with their defaults.
 */
export function checkFileValues(
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
    const near = nearestName(key, Object.keys(spec));
    const hint = near === undefined ? {} : { hint: `did you mean ${near}?` };
    throw new ConfigError(
      path,
      value,
      `a known ${what}: one of ${Object.keys(spec).join(", ")}`,
      hint,
    );
  }
  return node;
}

function checkLeaf(spec: LeafSpec, path: string, value: unknown): true {
  if (!spec.test(value)) throw new ConfigError(path, value, spec.expected);
  return true;
}

export function isMapping(value: unknown): value is Mapping {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
