import type { Counter, Gauge, Histogram } from "prom-client";
import type { JanitorMetrics } from "./janitorMetrics.js";

type GroupMetric = Counter | Gauge | Histogram;

/**
 * Removes every series of these groups (stream and group labels) from every metric family, so a
 * group that left the configuration leaves /metrics too instead of freezing at its last value.
 * Families are found by their labels, so metrics added later are covered without a list here.
 */
export async function forgetGroupSeries(
  metrics: JanitorMetrics,
  groups: readonly { stream: string; group: string }[],
): Promise<void> {
  if (groups.length === 0) return;
  const gone = new Set(groups.map(({ stream, group }) => JSON.stringify([stream, group])));
  for (const metric of Object.values(metrics) as unknown[]) {
    if (!isGroupMetric(metric)) continue;
    const { values } = await metric.get();
    const seen = new Set<string>();
    for (const { labels } of values) {
      const key = JSON.stringify([labels.stream, labels.group]);
      if (!gone.has(key)) continue;
      // Histogram samples carry `le`; the series itself is identified without it.
      const series = { ...labels } as Record<string, string | number>;
      delete series.le;
      const id = JSON.stringify(series);
      if (seen.has(id)) continue;
      seen.add(id);
      metric.remove(series);
    }
  }
}

function isGroupMetric(value: unknown): value is GroupMetric {
  if (typeof value !== "object" || value === null) return false;
  const names = (value as { labelNames?: unknown }).labelNames;
  return (
    Array.isArray(names) &&
    names.includes("stream") &&
    names.includes("group") &&
    typeof (value as { remove?: unknown }).remove === "function"
  );
}
