import type { ReadableSample } from "./StatusSample.js";

// The numbers and positions a verdict's reason is written with.

/** "1.5s", "90s": whole seconds from 10 s up. */
export function secs(ms: number): string {
  const s = ms / 1000;
  return `${s >= 10 ? Math.round(s) : Math.round(s * 10) / 10}s`;
}

export function rate(perSecond: number): string {
  return `${perSecond >= 10 ? Math.round(perSecond) : Math.round(perSecond * 10) / 10}/s`;
}

export function positionText(sample: ReadableSample): string {
  return sample.entriesRead === null
    ? `last-delivered id ${sample.lastDeliveredId}`
    : `entries-read ${sample.entriesRead}`;
}

export function lastSeen(attemptAt: number | undefined, nowMs: number): string {
  return attemptAt === undefined
    ? "no consumer"
    : `latest read attempt ${secs(nowMs - attemptAt)} ago`;
}

export function lagText(sample: ReadableSample): string {
  if (sample.lag === null && sample.addedAfterPosition === true) {
    return (
      `lag unknown but > 0: entries were added after last-delivered id ` + sample.lastDeliveredId
    );
  }
  return `lag ${sample.lag ?? "unknown"}`;
}
