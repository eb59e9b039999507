import type { Gauge } from "prom-client";
import type { JanitorMetrics } from "./janitorMetrics.js";
import type { PelScanResult } from "./PelScanner.js";
import type { GroupValues, ScrapeSnapshot } from "./readGroupSnapshots.js";
import { compareIds, idMs } from "./streamReplies.js";

export interface GaugeOptions {
  perConsumer: boolean;
  maxConsumersPerGroup: number;
  /** false on servers without XINFO GROUPS lag (< 7.0); undefined until detected: trust the reply. */
  groupLag: boolean | undefined;
}

/** The gauges set from Redis reads; the counters and process gauges are not the refresher's. */
function redisGauges(metrics: JanitorMetrics): Gauge[] {
  return [
    metrics.pendingEntries,
    metrics.pendingMaxIdleSeconds,
    metrics.pendingOldestAgeSeconds,
    metrics.pendingMaxDeliveries,
    metrics.pelScanTimestampSeconds,
    metrics.lagEntries,
    metrics.lagValid,
    metrics.lagSeconds,
    metrics.trimHeadroomSeconds,
    metrics.streamLengthEntries,
    metrics.deadLetterLengthEntries,
    metrics.consumerPendingEntries,
  ];
}

/** No samples rather than frozen ones: a value Redis did not just confirm is not exported. */
export function dropGroupGauges(metrics: JanitorMetrics): void {
  for (const gauge of redisGauges(metrics)) gauge.reset();
}

const seconds = (ms: number): number => Math.max(0, ms) / 1000;

/** The smaller of two optional stream ids. */
function minId(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return compareIds(a, b) <= 0 ? a : b;
}

/**
 * Time between the stream's first entry and the oldest entry the group still needs (its oldest
 * pending entry or its first undelivered one). A group that needs nothing yet needs whatever
 * comes next, so the distance runs to now. Undefined (no sample) for an empty stream the group
 * needs nothing from; 0 when what it needs is already gone.
 */
export function trimHeadroomMs(values: GroupValues, nowMs: number): number | undefined {
  const needed = minId(values.oldestPendingId, values.firstUndeliveredId);
  if (values.firstEntryId === undefined) return needed === undefined ? undefined : 0;
  const neededMs = needed === undefined ? nowMs : idMs(needed);
  return Math.max(0, neededMs - idMs(values.firstEntryId));
}

function setGroup(
  metrics: JanitorMetrics,
  labels: { stream: string; group: string },
  values: GroupValues,
  nowMs: number,
  scan: PelScanResult | undefined,
  options: GaugeOptions,
): void {
  metrics.pendingEntries.set(labels, values.pending);
  const oldestId = values.oldestPendingId;
  metrics.pendingOldestAgeSeconds.set(labels, oldestId ? seconds(nowMs - idMs(oldestId)) : 0);
  // The scan is exact as of its own time; the oldest entry's live idle time is a lower bound
  // that also covers the time before the first scan. An empty PEL is known to be 0 right now.
  const empty = values.pending === 0;
  const maxIdleMs = Math.max(scan?.maxIdleMs ?? 0, values.oldestPendingIdleMs);
  const maxDeliveries = Math.max(scan?.maxDeliveries ?? 0, values.oldestPendingDeliveries);
  metrics.pendingMaxIdleSeconds.set(labels, empty ? 0 : seconds(maxIdleMs));
  metrics.pendingMaxDeliveries.set(labels, empty ? 0 : maxDeliveries);
  if (scan !== undefined) metrics.pelScanTimestampSeconds.set(labels, scan.scannedAtMs / 1000);

  // Never turn a null lag into 0: no sample, and lag_valid says why.
  const lagKnown = values.lag !== null && options.groupLag !== false;
  if (lagKnown && values.lag !== null) metrics.lagEntries.set(labels, values.lag);
  metrics.lagValid.set(labels, lagKnown ? 1 : 0);
  const undelivered = values.firstUndeliveredId;
  metrics.lagSeconds.set(labels, undelivered ? seconds(nowMs - idMs(undelivered)) : 0);

  const headroomMs = trimHeadroomMs(values, nowMs);
  if (headroomMs !== undefined) metrics.trimHeadroomSeconds.set(labels, headroomMs / 1000);
  if (values.deadLetterLength !== undefined) {
    metrics.deadLetterLengthEntries.set(labels, values.deadLetterLength);
  }
  if (!options.perConsumer) return;
  // Bounded cardinality: the consumers holding the most, ties by name so the set is stable.
  const top = [...values.consumers]
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, options.maxConsumersPerGroup);
  for (const [consumer, pending] of top) {
    metrics.consumerPendingEntries.set({ ...labels, consumer }, pending);
  }
}

/**
 * Replaces every Redis-derived sample with what this scrape read, synchronously, so a scrape
 * never sees half of one refresh and half of another, and series of groups, streams or
 * consumers that went away disappear instead of freezing.
 */
export function applyGroupGauges(
  metrics: JanitorMetrics,
  snapshot: ScrapeSnapshot,
  scans: ReadonlyMap<string, PelScanResult>,
  options: GaugeOptions,
): void {
  dropGroupGauges(metrics);
  for (const [stream, length] of snapshot.streamLengths) {
    metrics.streamLengthEntries.set({ stream }, length);
  }
  for (const reading of snapshot.groups) {
    if (reading.state !== "ok") continue;
    const { group, values } = reading;
    const labels = { stream: group.stream, group: group.group };
    setGroup(metrics, labels, values, snapshot.nowMs, scans.get(group.id), options);
  }
}
