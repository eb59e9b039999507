import type { Registry } from "prom-client";
import { createMetrics, type MetricsOf } from "./createMetrics.js";
import { METRIC_TABLE } from "./metricTable.js";

/** The metrics of the daemon's maintenance work (METRIC_TABLE.maintenance). */
export type MaintenanceMetrics = MetricsOf<typeof METRIC_TABLE.maintenance>;

export function createMaintenanceMetrics(registry: Registry): MaintenanceMetrics {
  return createMetrics(registry, METRIC_TABLE.maintenance);
}
