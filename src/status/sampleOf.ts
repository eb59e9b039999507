import type { ResolvedGroup } from "../core/resolveGroup.js";
import { dueEntries, validLag } from "../scrape/applyGroupGauges.js";
import { ownDeadLetters, type GroupReading, type GroupValues } from "../scrape/GroupReading.js";
import { laneDue, laneLag } from "../scrape/retryLaneWork.js";
import type { PelScanResult } from "../scrape/scanGroupPel.js";
import type { ReadableSample, StatusSample } from "./StatusSample.js";

/**
 * The pending entry delivered the most times when that is past maxDeliveries: the PEL scan's
 * maximum (exact as of its scan), else the oldest pending entry read now (a lower bound).
 */
function overDeliveredOf(
  group: ResolvedGroup,
  values: GroupValues,
  scan: PelScanResult | undefined,
): ReadableSample["overDelivered"] {
  const { maxDeliveries } = group;
  if (scan?.maxDeliveriesId !== undefined && scan.maxDeliveries > maxDeliveries) {
    return { id: scan.maxDeliveriesId, deliveries: scan.maxDeliveries, maxDeliveries };
  }
  const id = values.oldestPendingId;
  const deliveries = values.oldestPendingDeliveries;
  return id !== undefined && deliveries > maxDeliveries
    ? { id, deliveries, maxDeliveries }
    : undefined;
}

/**
 * One group's sample from the shared read (readGroupSnapshots with `consumers`), or undefined
 * when nothing is known (a Cluster node that did not answer: not the group's fault, no verdict
 * moves). Due pending entries: the PEL scan's count when the scrape's scanner has one (exact as
 * of its scan), else 1 when the oldest pending entry is past its threshold (a lower bound), the
 * way stream_janitor_pending_due_entries counts them: one number for both. Lag: as lag_valid
 * judges it, unknown when Redis reports null or more than the stream holds (Redis before 8.0
 * over-reports it after trims), never a made-up number; but a null lag with no entries-read on
 * a stream that is not empty still says that entries wait (addedAfterPosition), body-free.
 */
export function sampleOf(
  reading: GroupReading,
  nowMs: number,
  scan: PelScanResult | undefined,
  groupLag: boolean | undefined,
): StatusSample | undefined {
  const group: ResolvedGroup = reading.group;
  if (reading.state === "unreachable") return undefined;
  if (reading.state !== "ok") return { readable: false, atMs: nowMs, error: reading.detail };
  const { values } = reading;
  const overDelivered =
    group.action === "monitor" ? overDeliveredOf(group, values, scan) : undefined;
  const entriesRead = values.activity?.entriesRead ?? null;
  const addedAfterPosition =
    values.lag === null && entriesRead === null && values.streamLength > 0 && groupLag !== false;
  return {
    readable: true,
    atMs: nowMs,
    lag: validLag(values, { groupLag }) ?? null,
    pending: values.pending,
    due: dueEntries(group, values, scan),
    oldestPendingIdleMs: values.pending === 0 ? 0 : values.oldestPendingIdleMs,
    // The group's own dead letters; unknown (null) while its index is still being built.
    deadLetters: ownDeadLetters(values).exact ? ownDeadLetters(values).count : null,
    retryLane: values.retryLaneLength ?? null,
    ...(group.retryLaneStream === undefined
      ? {}
      : {
          retryLaneLag: laneLag(values) ?? null,
          retryLanePending: values.retryLaneGroup?.pending ?? null,
          retryLaneDue: laneDue(group, values),
        }),
    lastDeliveredId: values.lastDeliveredId,
    ...(addedAfterPosition && values.activity !== undefined ? { addedAfterPosition } : {}),
    ...(overDelivered === undefined ? {} : { overDelivered }),
    entriesRead,
    consumerCount: values.activity?.consumerCount ?? 0,
    minConsumerIdleMs: values.activity?.minConsumerIdleMs ?? null,
  };
}
