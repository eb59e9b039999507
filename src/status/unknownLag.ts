import type { ReadableSample } from "./StatusSample.js";

/** UNKNOWN: Redis does not tell the lag, for one of three reasons. */
export function unknownLagOf(
  latest: ReadableSample,
): { status: "UNKNOWN"; reason: string } | undefined {
  if (latest.lag !== null) return undefined;
  if (latest.addedAfterPosition === true) {
    return {
      status: "UNKNOWN",
      reason:
        `lag unknown: Redis has no entries-read count for the group yet (created or moved at ` +
        `an id other than 0 or the stream's end); entries were added after last-delivered id ` +
        `${latest.lastDeliveredId}; ${latest.pending} pending, ${latest.due} due`,
    };
  }
  if (latest.unbackedLag !== undefined) {
    return {
      status: "UNKNOWN",
      reason:
        `lag unknown: Redis reports lag ${latest.unbackedLag} but no entry follows ` +
        `last-delivered id ${latest.lastDeliveredId} (before Redis 7.4 the group's entries-read ` +
        `count is not restored exactly from an AOF or on a promoted replica; ` +
        `XGROUP SETID at that id lets Redis count it again); ${latest.pending} pending, ` +
        `${latest.due} due`,
    };
  }
  return {
    status: "UNKNOWN",
    reason:
      `lag unknown: Redis reports it as null or above the stream's length (entries ` +
      `deleted or trimmed after the group's position); ${latest.pending} pending, ` +
      `${latest.due} due`,
  };
}
