import type { ResolvedGroup } from "../core/resolveGroup.js";
import { dueEntries, validLag } from "../scrape/applyGroupGauges.js";
import type { GroupReading } from "../scrape/GroupReading.js";
import { laneDue, laneLag } from "../scrape/retryLaneWork.js";
import type { PelScanResult } from "../scrape/PelScanner.js";
import type { StatusSample } from "./StatusSample.js";

/**
 * One group's sample from the shared read (readGroupSnapshots with `consumers`), or undefined
 * when nothing is known (a Cluster node that did not answer: not the group's fault, no verdict
 * moves). Due pending entries: the PEL scan's count when the scrape's scanner has one (exact as
 * of its scan), else 1 when the oldest pending entry is past its threshold (a lower bound), the
 * way stream_janitor_pending_due_entries counts them: one number for both. Lag: as lag_valid
 * judges it, unknown when Redis reports null or more than the stream holds (Redis before 8.0
 * over-reports it after trims), never a made-up number.
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
  return {
    readable: true,
    atMs: nowMs,
    lag: validLag(values, { groupLag }) ?? null,
    pending: values.pending,
    due: dueEntries(group, values, scan),
    oldestPendingIdleMs: values.pending === 0 ? 0 : values.oldestPendingIdleMs,
    deadLetters: values.deadLetterLength ?? null,
    retryLane: values.retryLaneLength ?? null,
    ...(group.retryLaneStream === undefined
      ? {}
      : {
          retryLaneLag: laneLag(values) ?? null,
          retryLanePending: values.retryLaneGroup?.pending ?? null,
          retryLaneDue: laneDue(group, values),
        }),
    lastDeliveredId: values.lastDeliveredId,
    entriesRead: values.activity?.entriesRead ?? null,
    consumerCount: values.activity?.consumerCount ?? 0,
    minConsumerIdleMs: values.activity?.minConsumerIdleMs ?? null,
  };
}
