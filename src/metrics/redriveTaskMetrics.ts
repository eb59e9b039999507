import type { Registry } from "prom-client";
import { createMetrics, type MetricsOf } from "./createMetrics.js";
import { METRIC_TABLE } from "./metricTable.js";

/** The metrics of redrive tasks (METRIC_TABLE.redriveTasks). */
export type RedriveTaskMetrics = MetricsOf<typeof METRIC_TABLE.redriveTasks>;

export function createRedriveTaskMetrics(registry: Registry): RedriveTaskMetrics {
  return createMetrics(registry, METRIC_TABLE.redriveTasks);
}
