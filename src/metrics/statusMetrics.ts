import type { Registry } from "prom-client";
import { createMetrics, type MetricsOf } from "./createMetrics.js";
import { METRIC_TABLE } from "./metricTable.js";

/** The group status gauge (METRIC_TABLE.status). */
export type StatusMetrics = MetricsOf<typeof METRIC_TABLE.status>;

export function createStatusMetrics(registry: Registry): StatusMetrics {
  return createMetrics(registry, METRIC_TABLE.status);
}
