import type { Registry } from "prom-client";
import { createMetrics, type MetricsOf } from "./createMetrics.js";
import { METRIC_TABLE } from "./metricTable.js";

/** The discovery's own metrics (METRIC_TABLE.discovery). */
export type DiscoveryMetrics = MetricsOf<typeof METRIC_TABLE.discovery>;

export function createDiscoveryMetrics(registry: Registry): DiscoveryMetrics {
  return createMetrics(registry, METRIC_TABLE.discovery);
}
