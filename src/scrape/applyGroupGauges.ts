import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { GroupGauge } from "../metrics/GroupGauge.js";
import type { JanitorMetrics } from "../metrics/janitorMetrics.js";
import type { PelScanResult } from "./scanGroupPel.js";
import { ownDeadLetters, type GroupValues, type ScrapeSnapshot } from "./GroupReading.js";
import { idMs } from "../redis/replies.js";
import { backoffPolicy, dueAfterMs } from "../core/backoffThreshold.js";
import { laneDue, laneLag } from "./retryLaneWork.js";

export interface GaugeOptions {
  perConsumer: boolean;
  maxConsumersPerGroup: number;
  /** false on servers without XINFO GROUPS lag (< 7.0); undefined until detected: trust the reply. */
  groupLag: boolean | undefined;
}

/** The gauges set from Redis reads; the counters and process gauges are not the refresher's. */
function redisGauges(metrics: JanitorMetrics): GroupGauge<string>[] {
  return [
    metrics.pendingEntries,
    metrics.pendingMaxIdleSeconds,
    metrics.pendingOldestAgeSeconds,
    metrics.pendingMaxDeliveries,
    metrics.groupMaxDeliveries,
    metrics.pelScanTimestampSeconds,
    metrics.pendingDueEntries,
    metrics.lagEntries,
    metrics.lagValid,
    metrics.lagSeconds,
    metrics.backlogEntries,
    metrics.streamLengthEntries,
    metrics.deadLetterLengthEntries,
    metrics.deadLettersEntries,
    metrics.deadLetterStreamLengthEntries,
    metrics.retryLaneLengthEntries,
    metrics.retryLanePendingEntries,
    metrics.retryLaneLagEntries,
    metrics.consumerPendingEntries,
    metrics.groupReadable,
  ];
}

/** No samples rather than frozen ones: a value Redis did not just confirm is not exported. */
export function dropGroupGauges(metrics: JanitorMetrics): void {
  for (const gauge of redisGauges(metrics)) gauge.reset();
}

const seconds = (ms: number): number => Math.max(0, ms) / 1000;

type GroupLabels = Readonly<{ stream: string; group: string }>;

/**
 * One labels object per group and per stream, handed to the gauges scrape after scrape: the
 * registry formats a labels object into text once and reuses the text while the object lives
 * (see GroupGauge). Groups come from the configuration, so both maps stay that size.
 */
export class SeriesLabels {
  private readonly groups = new WeakMap<ResolvedGroup, GroupLabels>();
  private readonly streams = new Map<string, Readonly<{ stream: string }>>();

  group(group: ResolvedGroup): GroupLabels {
    let labels = this.groups.get(group);
    if (labels === undefined) {
      labels = Object.freeze({ stream: group.stream, group: group.group });
      this.groups.set(group, labels);
    }
    return labels;
  }

  stream(stream: string): Readonly<{ stream: string }> {
    let labels = this.streams.get(stream);
    if (labels === undefined) {
      labels = Object.freeze({ stream });
      this.streams.set(stream, labels);
    }
    return labels;
  }
}

/**
 * The lag when it can be trusted. Before Redis 8.0, `XINFO GROUPS` can report a lag larger than
 * what is left in the stream after the group's last-delivered id (entries trimmed or deleted
 * after it, redis/redis #13338 and #13473). The exact count of entries after that id would need
 * an XRANGE over them, bodies included, so the check is the bound every such case breaks first:
 * no group can have more entries waiting than the stream holds. Over XLEN the lag is unknown.
 */
export function validLag(
  values: GroupValues,
  options: Pick<GaugeOptions, "groupLag">,
): number | undefined {
  if (values.lag === null || options.groupLag === false) return undefined;
  return values.lag > values.streamLength ? undefined : values.lag;
}

/**
 * How long entries have been waiting for the group, as an upper bound read from ids alone: Redis
 * TIME minus the millisecond part of the last-delivered id, while anything waits. The first
 * undelivered entry came after that id, so its true age is at most this; the id of that entry
 * itself is out of reach without reading its body. 0 when nothing waits (lag 0, or an empty
 * stream); undefined (no sample) when the group has received nothing yet, or when the lag is
 * unknown and so is whether anything waits at all.
 */
function waitingBoundMs(
  values: GroupValues,
  lag: number | undefined,
  nowMs: number,
): number | undefined {
  if (lag === 0 || values.streamLength === 0) return 0;
  if (lag === undefined) return undefined;
  if (values.lastDeliveredId === "0-0") return undefined;
  return Math.max(0, nowMs - idMs(values.lastDeliveredId));
}

/**
 * Due entries: exact as of the scan; before it, whether the oldest entry is due (a lower bound).
 * The group status counts them the same way.
 */
export function dueEntries(
  group: ResolvedGroup,
  values: GroupValues,
  scan: PelScanResult | undefined,
) {
  if (scan !== undefined) return scan.dueEntries;
  const oldestId = values.oldestPendingId;
  if (values.pending === 0 || oldestId === undefined) return 0;
  const threshold = dueAfterMs(backoffPolicy(group), oldestId, values.oldestPendingDeliveries);
  return values.oldestPendingIdleMs >= threshold ? 1 : 0;
}

/**
 * What the group's retry lane adds to its backlog: lane lag plus due copies; 0 without a lane;
 * undefined (the backlog is unknown) while the lane's lag or work is.
 */
function laneWork(group: ResolvedGroup, values: GroupValues): number | undefined {
  if (group.retryLaneStream === undefined) return 0;
  const retryLaneLag = laneLag(values);
  return typeof retryLaneLag === "number" ? retryLaneLag + laneDue(group, values) : undefined;
}

function setGroup(
  metrics: JanitorMetrics,
  group: ResolvedGroup,
  labels: GroupLabels,
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
  metrics.groupMaxDeliveries.set(labels, group.maxDeliveries);
  if (scan !== undefined) metrics.pelScanTimestampSeconds.set(labels, scan.scannedAtMs / 1000);
  const due = dueEntries(group, values, scan);
  metrics.pendingDueEntries.set(labels, due);

  // Never turn a null lag into 0: no sample, and lag_valid says why. The backlog follows it, as
  // an autoscaler would read a 0 as "no work" and scale the consumers to zero.
  const lag = validLag(values, options);
  if (lag !== undefined) metrics.lagEntries.set(labels, lag);
  const lane = laneWork(group, values);
  if (lag !== undefined && lane !== undefined) {
    metrics.backlogEntries.set(labels, lag + due + lane);
  }
  metrics.lagValid.set(labels, lag === undefined ? 0 : 1);
  const waitingMs = waitingBoundMs(values, lag, nowMs);
  if (waitingMs !== undefined) metrics.lagSeconds.set(labels, seconds(waitingMs));

  if (values.deadLetterLength !== undefined) {
    metrics.deadLetterLengthEntries.set(labels, values.deadLetterLength);
  }
  if (values.retryLaneLength !== undefined) {
    metrics.retryLaneLengthEntries.set(labels, values.retryLaneLength);
  }
  if (values.retryLaneGroup !== undefined) {
    metrics.retryLanePendingEntries.set(labels, values.retryLaneGroup.pending);
    const retryLaneLag = laneLag(values);
    if (typeof retryLaneLag === "number") metrics.retryLaneLagEntries.set(labels, retryLaneLag);
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
 * The group's own dead letters (only once its index is built: a count that is still growing
 * would say too few), and its dead-letter stream's length, once per stream: the groups sharing
 * it set the same series to the same value.
 */
function setDeadLetters(
  metrics: JanitorMetrics,
  labels: GroupLabels,
  stream: Readonly<{ stream: string }>,
  values: GroupValues,
): void {
  const own = ownDeadLetters(values);
  if (own.exact) metrics.deadLettersEntries.set(labels, own.count);
  if (values.deadLetterLength !== undefined) {
    metrics.deadLetterStreamLengthEntries.set(stream, values.deadLetterLength);
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
  series: SeriesLabels,
): void {
  dropGroupGauges(metrics);
  for (const [stream, length] of snapshot.streamLengths) {
    metrics.streamLengthEntries.set(series.stream(stream), length);
  }
  for (const reading of snapshot.groups) {
    // Cluster: the group's node did not answer. No sample at all rather than a wrong one.
    if (reading.state === "unreachable") continue;
    const labels = series.group(reading.group);
    // Readability is known while Redis answers, for every group, readable or not.
    metrics.groupReadable.set(labels, reading.state === "ok" ? 1 : 0);
    if (reading.state !== "ok") continue;
    const { group, values } = reading;
    setGroup(metrics, group, labels, values, snapshot.nowMs, scans.get(group.id), options);
    setDeadLetters(metrics, labels, series.stream(group.deadLetterStream), values);
  }
}
