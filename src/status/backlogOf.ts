import type { ReadableSample } from "./StatusSample.js";

/**
 * The group's backlog as `stream_janitor_backlog_entries` counts it (see README
 * "Scaling consumers on the backlog"): lag + due, plus the retry lane's lag and due copies when
 * the group has a lane.
 * Null while the lag (or the lane's lag) is unknown: never a made-up number.
 */
export function backlogOf(sample: ReadableSample): number | null {
  if (sample.lag === null) return null;
  const { retryLaneLag } = sample;
  // The lane's fields are present only for a group with a lane (sampleOf).
  if (retryLaneLag === undefined) return sample.lag + sample.due;
  if (retryLaneLag === null) return null;
  return sample.lag + sample.due + retryLaneLag + (sample.retryLaneDue ?? 0);
}
