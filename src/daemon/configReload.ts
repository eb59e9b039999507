import type { Gauge, Registry } from "prom-client";
import { ConfigError } from "../config/ConfigError.js";
import type { JanitorConfig } from "../core/configTypes.js";
import { createMetrics } from "../metrics/createMetrics.js";
import { METRIC_TABLE } from "../metrics/metricTable.js";

/**
 * Sections read once, when connections, the lease, the HTTP server and the status sampler are
 * built: a reload that changes them is applied everywhere else, and these keys are named in a
 * warning.
 */
const RESTART_SECTIONS = ["redis", "lease", "http", "metrics", "events", "status"] as const;

/** Dotted keys of the restart-only sections whose values differ (names only: values may be secret). */
export function settingsNeedingRestart(running: JanitorConfig, next: JanitorConfig): string[] {
  const changed: string[] = [];
  for (const section of RESTART_SECTIONS) {
    const before = running[section] as Record<string, unknown>;
    const after = next[section] as Record<string, unknown>;
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) {
        changed.push(`${section}.${key}`);
      }
    }
  }
  return changed;
}

/** The problems of a failed load, one line each, secrets already masked by ConfigError. */
export function reloadProblems(error: unknown): string[] {
  if (error instanceof ConfigError) return error.problems.map((problem) => problem.message);
  return [error instanceof Error ? error.message : String(error)];
}

/** The reload gauge (METRIC_TABLE.reload): 1 at start and after a good reload. */
export function createReloadGauge(registry: Registry): Gauge {
  const gauge = createMetrics(registry, METRIC_TABLE.reload).lastReloadSuccessful;
  gauge.set(1);
  return gauge;
}
