import type { Registry } from "prom-client";
import { createMetrics, type MetricsOf } from "./createMetrics.js";
import { METRIC_TABLE } from "./metricTable.js";

/** The counters of the advisory events (METRIC_TABLE.events). */
export type EventMetrics = MetricsOf<typeof METRIC_TABLE.events>;

export function createEventMetrics(registry: Registry): EventMetrics {
  return createMetrics(registry, METRIC_TABLE.events);
}
