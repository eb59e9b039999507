import type { GroupStatus } from "../core/groupStatus.js";
import { compareStreamIds } from "../core/streamIds.js";
import type { ReadableSample, StatusSample } from "./StatusSample.js";

export interface JudgeSettings {
  /** status.stuckAfterMs, or 10 x the group's minIdleMs when that is 0. */
  stuckAfterMs: number;
  /**
   * A consumer is "seen" in a sample when its XINFO CONSUMERS idle (time since its latest read
   * attempt) is below this: the window's duration, status.intervalMs x status.window.
   */
  seenWithinMs: number;
}

export interface Verdict {
  status: GroupStatus;
  /** In words and numbers. */
  reason: string;
  /** Set when fewer than 2 samples allowed no real verdict: the first real one is not a change. */
  provisional?: true;
}

/** "1.5s", "90s": whole seconds from 10 s up. */
function secs(ms: number): string {
  const s = ms / 1000;
  return `${s >= 10 ? Math.round(s) : Math.round(s * 10) / 10}s`;
}

function rate(perSecond: number): string {
  return `${perSecond >= 10 ? Math.round(perSecond) : Math.round(perSecond * 10) / 10}/s`;
}

/** The read position: entries-read when every sample has it, else the last-delivered id. */
function positionMoved(run: readonly ReadableSample[]): boolean {
  const first = run[0] as ReadableSample;
  if (run.every((sample) => sample.entriesRead !== null)) {
    return run.some((sample) => sample.entriesRead !== first.entriesRead);
  }
  return run.some((sample) => sample.lastDeliveredId !== first.lastDeliveredId);
}

function positionText(sample: ReadableSample): string {
  return sample.entriesRead === null
    ? `last-delivered id ${sample.lastDeliveredId}`
    : `entries-read ${sample.entriesRead}`;
}

function lastSeen(sample: ReadableSample): string {
  return sample.minConsumerIdleMs === null
    ? "no consumer"
    : `latest read attempt ${secs(sample.minConsumerIdleMs)} ago`;
}

function rewindOf(run: readonly ReadableSample[]): Verdict | undefined {
  for (let i = run.length - 1; i > 0; i -= 1) {
    const before = run[i - 1] as ReadableSample;
    const after = run[i] as ReadableSample;
    if (compareStreamIds(after.lastDeliveredId, before.lastDeliveredId) < 0) {
      const last = run[run.length - 1] as ReadableSample;
      return {
        status: "REWIND",
        reason:
          `last-delivered id moved back from ${before.lastDeliveredId} to ` +
          `${after.lastDeliveredId} (XGROUP SETID) ${secs(last.atMs - after.atMs)} ago: ` +
          `entries after it are delivered again`,
      };
    }
  }
  return undefined;
}

/**
 * The verdict of contract section 9 over one group's window (oldest sample first), first match
 * wins: ERROR, REWIND, STOP, STALL, STUCK, WARN, UNKNOWN, OK. The window that counts is the run
 * of readable samples since the latest unreadable one: a group deleted and created again starts
 * afresh. Fewer than 2 such samples give a provisional UNKNOWN (nothing moves in one sample).
 * "Work waits" (STOP) and "lag unknown" (UNKNOWN) are judged on the latest sample; WARN needs
 * lag > 0 in every sample (see there).
 */
export function judgeGroup(samples: readonly StatusSample[], settings: JudgeSettings): Verdict {
  const latest = samples[samples.length - 1];
  if (latest === undefined) {
    return { status: "UNKNOWN", reason: "not sampled yet", provisional: true };
  }
  if (!latest.readable) return { status: "ERROR", reason: `cannot read: ${latest.error}` };
  const start = samples.findLastIndex((sample) => !sample.readable) + 1;
  const run = samples.slice(start) as ReadableSample[];
  const first = run[0] as ReadableSample;
  if (run.length < 2) {
    return {
      status: "UNKNOWN",
      reason: "one sample so far: a verdict needs two (status.intervalMs apart)",
      provisional: true,
    };
  }
  const spanText = secs(latest.atMs - first.atMs);

  const rewind = rewindOf(run);
  if (rewind !== undefined) return rewind;

  const seen = run.some(
    (sample) =>
      sample.minConsumerIdleMs !== null && sample.minConsumerIdleMs < settings.seenWithinMs,
  );
  // A group's retry lane is its work too (its consumers read both): waiting there counts alike.
  const laneWaits = (latest.retryLaneLag ?? 0) > 0 || (latest.retryLaneDue ?? 0) > 0;
  const waits = (latest.lag ?? 0) > 0 || latest.due > 0 || laneWaits;
  const laneWork = laneWaits
    ? `; retry lane lag ${latest.retryLaneLag ?? "unknown"}, ${latest.retryLaneDue ?? 0} due`
    : "";
  const work = `lag ${latest.lag ?? "unknown"}, ${latest.due} due pending${laneWork}`;
  if (waits && !seen) {
    const who =
      latest.consumerCount === 0
        ? "the group has no consumer"
        : `no consumer read in ${secs(settings.seenWithinMs)} ` +
          `(${latest.consumerCount} consumers, ${lastSeen(latest)})`;
    return { status: "STOP", reason: `work waits (${work}) and ${who}` };
  }

  const moved = positionMoved(run);
  if (!moved && run.every((sample) => sample.lag !== null && sample.lag > 0)) {
    return {
      status: "STALL",
      reason:
        `lag ${first.lag ?? 0} -> ${latest.lag ?? 0} and the read position stayed at ` +
        `${positionText(latest)} for ${spanText} while consumers were seen (${lastSeen(latest)})`,
    };
  }

  const stuck = settings.stuckAfterMs;
  if (run.every((sample) => sample.pending > 0 && sample.oldestPendingIdleMs > stuck)) {
    return {
      status: "STUCK",
      reason:
        `oldest pending entry idle ${secs(latest.oldestPendingIdleMs)}, past ${secs(stuck)} ` +
        `in every sample for ${spanText} (${latest.pending} pending, ${latest.due} due)`,
    };
  }

  // As Burrow: a lag that touched 0 within the window is a group keeping up (steady load
  // fluctuates), so WARN needs lag > 0 in every sample and more at the end than at the start.
  const lagged = run.every((sample) => sample.lag !== null && sample.lag > 0);
  if (moved && lagged && (latest.lag ?? 0) > (first.lag ?? 0)) {
    const read =
      first.entriesRead !== null && latest.entriesRead !== null
        ? `consumers read ${rate((latest.entriesRead - first.entriesRead) / ((latest.atMs - first.atMs) / 1000))}`
        : "the read position moves";
    return {
      status: "WARN",
      reason: `lag ${latest.lag} and growing: ${first.lag} -> ${latest.lag} in ${spanText} while ${read}`,
    };
  }

  if (latest.lag === null) {
    return {
      status: "UNKNOWN",
      reason:
        `lag unknown: Redis reports it as null or above the stream's length (entries ` +
        `deleted or trimmed after the group's position); ${latest.pending} pending, ` +
        `${latest.due} due`,
    };
  }
  return {
    status: "OK",
    reason: `lag ${latest.lag}, ${latest.pending} pending, ${latest.due} due over ${spanText}`,
  };
}
