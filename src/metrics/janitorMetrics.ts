import type { Registry } from "prom-client";
import { createMetrics, type MetricsOf } from "./createMetrics.js";
import { METRIC_TABLE } from "./metricTable.js";

/** The daemon's main families (METRIC_TABLE.janitor), with the registry they are in. */
export type JanitorMetrics = { readonly registry: Registry } & MetricsOf<
  typeof METRIC_TABLE.janitor
>;

export function createJanitorMetrics(registry: Registry, version: string): JanitorMetrics {
  const metrics: JanitorMetrics = { registry, ...createMetrics(registry, METRIC_TABLE.janitor) };
  metrics.buildInfo.set({ version }, 1);
  metrics.leader.set(0);
  metrics.redisUp.set(0);
  return metrics;
}
