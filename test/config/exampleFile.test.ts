import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { discoverSchema, groupSchema, schemaLeaves } from "../../src/config/configSchema.js";
import { loadConfig } from "../../src/config/loadConfig.js";

const EXAMPLE = new URL("../../config/example.yaml", import.meta.url).pathname;

describe("config/example.yaml", () => {
  it("shows every key with its default, the metrics section included, and loads", async () => {
    const example = parse(await readFile(EXAMPLE, "utf8")) as Record<string, unknown>;
    for (const [path, spec] of schemaLeaves()) {
      if (path === "groups" || path === "discover" || path === "retention") continue;
      // Nested sections too (`redis.tls.caFile`).
      const shown = path
        .split(".")
        .reduce<unknown>(
          (node, key) => (node as Record<string, unknown> | undefined)?.[key],
          example,
        );
      expect({ path, value: shown }).toEqual({ path, value: spec.default });
    }
    const [first] = example.groups as Record<string, unknown>[];
    for (const [key, spec] of Object.entries(groupSchema)) {
      if (spec.required === true) expect(first).toHaveProperty(key);
      else expect({ key, value: first?.[key] }).toEqual({ key, value: spec.default });
    }
    const [pattern] = example.discover as Record<string, unknown>[];
    for (const [key, spec] of Object.entries(discoverSchema)) {
      if (spec.required === true) expect(pattern).toHaveProperty(key);
      else expect({ key, value: pattern?.[key] }).toEqual({ key, value: spec.default });
    }
    await expect(loadConfig({ configPath: EXAMPLE, env: {} })).resolves.toBeDefined();
  });
});
