import { streamIdMs } from "../core/streamIds.js";

/** "-" for what is not known: the console never shows a made-up 0. */
export const UNKNOWN = "-";

/** 950ms, 12s, 4m 05s, 3h 20m, 2d 4h: short enough for a table cell on a phone. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms) || ms < 0) return UNKNOWN;
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, "0")}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h ${String(minutes % 60).padStart(2, "0")}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

export function formatCount(value: number | null | undefined): string {
  return value === null || value === undefined ? UNKNOWN : String(value);
}

/** ISO time to the second, UTC: what the logs and events use. */
export function formatTime(unixMs: number | null | undefined): string {
  if (unixMs === null || unixMs === undefined || !Number.isFinite(unixMs) || unixMs <= 0) {
    return UNKNOWN;
  }
  return new Date(unixMs).toISOString().replace(/\.\d+Z$/u, "Z");
}

/**
 * Lag age: how far behind in time the group's read position is, when it is behind at all (lag
 * > 0): now minus the timestamp of the group's last-delivered id (the entry consumers got last).
 * Read from the id alone, no entry is read. Null when lag is 0 or unknown, or the id is not a
 * timestamp id (0-0 before the first delivery: then the age of the oldest waiting entry is not
 * known without reading it).
 */
export function lagAgeMs(
  lag: number | null,
  lastDeliveredId: string | null,
  nowMs: number,
): number | null {
  if (lag === null || lag <= 0 || lastDeliveredId === null) return null;
  if (!/^\d+-\d+$/u.test(lastDeliveredId)) return null;
  const deliveredAt = streamIdMs(lastDeliveredId);
  if (deliveredAt <= 0) return null;
  return Math.max(0, nowMs - deliveredAt);
}

/** The oldest pending entry's idle time; "-" when nothing is pending (there is no oldest). */
export function oldestPendingIdle(sample: {
  pending: number | null;
  oldestPendingIdleMs: number | null;
}): number | null {
  return sample.pending === 0 ? null : sample.oldestPendingIdleMs;
}
