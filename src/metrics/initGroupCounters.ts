import type { ResolvedGroup } from "../sweep/resolveGroup.js";
import type { JanitorMetrics } from "./janitorMetrics.js";

/**
 * Exports every configured group's counters at 0 from start-up. Prometheus' increase() takes a
 * series' first sample as its baseline: a ghost counter that first appears already at 1 (the
 * first sweep found the ghost before the first scrape) never shows an increase, and the alert on
 * it never fires. A zero sample ahead of the first increment makes that increment visible.
 */
export function initGroupCounters(metrics: JanitorMetrics, groups: readonly ResolvedGroup[]): void {
  for (const { stream, group } of groups) {
    const labels = { stream, group };
    metrics.claimedEntries.inc(labels, 0);
    metrics.requeuedEntries.inc(labels, 0);
    metrics.reassignedEntries.inc(labels, 0);
    metrics.deadLetteredEntries.inc({ ...labels, reason: "max-deliveries" }, 0);
    metrics.deadLetteredEntries.inc({ ...labels, reason: "action" }, 0);
    metrics.ghostEntries.inc(labels, 0);
    metrics.sweeps.inc(labels, 0);
  }
}
