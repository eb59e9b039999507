import type { StatusSampleReport } from "../core/groupStatus.js";
import type { StatusSample } from "./StatusSample.js";

const NO_SAMPLE: StatusSampleReport = {
  lag: null,
  pending: null,
  due: null,
  oldestPendingIdleMs: null,
  deadLetters: null,
  retryLane: null,
  lastDeliveredId: null,
};

/** A group's latest sample as /status.json serves it; all null when it could not be read. */
export function sampleReport(sample: StatusSample): StatusSampleReport {
  if (!sample.readable) return NO_SAMPLE;
  const { lag, pending, due, oldestPendingIdleMs, deadLetters, retryLane } = sample;
  const { lastDeliveredId } = sample;
  // Only for a group with a lane: the report's shape stays as it was for the others.
  const lane =
    sample.retryLaneLag === undefined
      ? {}
      : { retryLaneLag: sample.retryLaneLag, retryLanePending: sample.retryLanePending ?? null };
  return {
    lag,
    pending,
    due,
    oldestPendingIdleMs,
    deadLetters,
    retryLane,
    ...lane,
    lastDeliveredId,
  };
}
