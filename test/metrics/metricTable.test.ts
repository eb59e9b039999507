import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createMetrics } from "../../src/metrics/createMetrics.js";
import { METRIC_TABLE, type MetricDescription } from "../../src/metrics/metricTable.js";

const SRC = new URL("../../src", import.meta.url).pathname;
const sections: Record<string, MetricDescription>[] = Object.values(METRIC_TABLE);
const descriptions = sections.flatMap((section) => Object.values(section));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

describe("METRIC_TABLE", () => {
  it("names each family once, with the project's prefix", () => {
    const names = descriptions.map((description) => description.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^stream_janitor_[a-z_]+$/u);
  });

  it("builds every family as described: name, type, help and label names", async () => {
    const registry = new Registry();
    for (const section of sections) createMetrics(registry, section);
    const families = await registry.getMetricsAsJSON();
    expect(families.map(({ name }) => name)).toEqual(descriptions.map(({ name }) => name));
    for (const description of descriptions) {
      const family = families.find(({ name }) => name === description.name);
      expect(family?.type).toBe(description.type);
      expect(family?.help).toBe(description.help);
      const metric = registry.getSingleMetric(description.name) as unknown as {
        labelNames: readonly string[];
      };
      expect([...metric.labelNames]).toEqual([...description.labelNames]);
    }
  });

  it("is the only place a metric family is defined", () => {
    const TABLE_FILES = ["metricTable.ts", "metricTableGauges.ts", "metricTableSweep.ts"];
    const elsewhere = sourceFiles(SRC)
      // The table, written in three files (each under the house's 250 lines) and assembled in
      // metricTable.ts: no other file may name a family.
      .filter((path) => !TABLE_FILES.some((file) => path.endsWith(join("metrics", file))))
      .filter((path) => !path.endsWith(join("metrics", "createMetrics.ts")))
      .filter((path) => {
        const text = readFileSync(path, "utf8");
        return /new (Gauge|Counter|Histogram|Summary)\(|name: "stream_janitor_/u.test(text);
      });
    expect(elsewhere).toEqual([]);
  });
});
