import type { ResolvedGroup } from "../core/resolveGroup.js";
import { dueEntries } from "../scrape/applyGroupGauges.js";
import type { GroupReading } from "../scrape/GroupReading.js";
import type { PelScanResult } from "../scrape/PelScanner.js";
import type { StatusSample } from "./StatusSample.js";

/**
 * One group's sample from the shared read (readGroupSnapshots with `consumers`), or undefined
 * when nothing is known (a Cluster node that did not answer: not the group's fault, no verdict
 * moves). Due pending entries: the PEL scan's count when the scrape's scanner has one (exact as
 * of its scan), else 1 when the oldest pending entry is past its threshold (a lower bound), the
 * way stream_janitor_pending_due_entries counts them: one number for both.
 */
export function sampleOf(
  reading: GroupReading,
  nowMs: number,
  scan: PelScanResult | undefined,
): StatusSample | undefined {
  const group: ResolvedGroup = reading.group;
  if (reading.state === "unreachable") return undefined;
  if (reading.state !== "ok") return { readable: false, atMs: nowMs, error: reading.detail };
  const { values } = reading;
  return {
    readable: true,
    atMs: nowMs,
    lag: values.lag,
    pending: values.pending,
    due: dueEntries(group, values, scan),
    oldestPendingIdleMs: values.pending === 0 ? 0 : values.oldestPendingIdleMs,
    deadLetters: values.deadLetterLength ?? null,
    retryLane: values.retryLaneLength ?? null,
    lastDeliveredId: values.lastDeliveredId,
    entriesRead: values.activity?.entriesRead ?? null,
    consumerCount: values.activity?.consumerCount ?? 0,
    minConsumerIdleMs: values.activity?.minConsumerIdleMs ?? null,
  };
}
