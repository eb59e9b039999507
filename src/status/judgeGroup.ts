import type { GroupStatus } from "../core/groupStatus.js";
import { compareStreamIds } from "../core/streamIds.js";
import type { ReadableSample, StatusSample } from "./StatusSample.js";
import { unknownLagOf } from "./unknownLag.js";
import { lagText, lastSeen, positionText, rate, secs } from "./verdictText.js";

export interface JudgeSettings {
  /** status.stuckAfterMs, or 10 x the group's minIdleMs when that is 0. */
  stuckAfterMs: number;
  /**
   * A consumer is "seen" in a sample when its XINFO CONSUMERS idle (time since its latest read
   * attempt) is below this: the window's duration, status.intervalMs x status.window.
   */
  seenWithinMs: number;
  /**
   * Whether the server's XINFO CONSUMERS idle counts every read attempt, empty ones too (7.2+,
   * the servers with an `inactive` field). Where it does not (7.0), a consumer polling with
   * nothing new looks idle, so due pending alone is no evidence that nobody reads: STOP then
   * needs lag > 0 (a live consumer would have read that work and been seen). Default true.
   */
  readAttemptsReported?: boolean;
}

export interface Verdict {
  status: GroupStatus;
  /** In words and numbers. */
  reason: string;
  /** Set when fewer than 2 samples allowed no real verdict: the first real one is not a change. */
  provisional?: true;
}

/** The read position: entries-read when every sample has it, else the last-delivered id. */
function positionMoved(run: readonly ReadableSample[]): boolean {
  const first = run[0] as ReadableSample;
  if (run.every((sample) => sample.entriesRead !== null)) {
    return run.some((sample) => sample.entriesRead !== first.entriesRead);
  }
  return run.some((sample) => sample.lastDeliveredId !== first.lastDeliveredId);
}

/**
 * Redis time of the latest read attempt any sample of the run saw (atMs - idle), or undefined.
 * The latest sample alone would miss a consumer deleted since it was seen.
 */
function lastAttemptAt(run: readonly ReadableSample[]): number | undefined {
  let latest: number | undefined;
  for (const sample of run) {
    if (sample.minConsumerIdleMs === null) continue;
    const at = sample.atMs - sample.minConsumerIdleMs;
    if (latest === undefined || at > latest) latest = at;
  }
  return latest;
}

/** Entries wait after the read position: lag > 0, or a null lag known to hide some. */
function behind(sample: ReadableSample): boolean {
  return (sample.lag ?? 0) > 0 || sample.addedAfterPosition === true;
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
 * The verdict (README "Group status") over one group's window (oldest sample first), first match
 * wins: ERROR, REWIND, STOP, STALL, STUCK, WARN, UNKNOWN, OK. The window that counts is the run
 * of readable samples since the latest unreadable one: a group deleted and created again starts
 * afresh. Fewer than 2 such samples give a provisional UNKNOWN (nothing moves in one sample).
 * "Work waits" (STOP) and "lag unknown" (UNKNOWN) are judged on the latest sample; WARN needs
 * lag > 0 in every sample (see there).
 */
export function judgeGroup(samples: readonly StatusSample[], settings: JudgeSettings): Verdict {
  const verdict = judgeRun(samples, settings);
  const latest = samples[samples.length - 1];
  const over = latest?.readable === true ? latest.overDelivered : undefined;
  if (over === undefined || verdict.provisional === true) return verdict;
  // monitor never claims, so nothing dead-letters an entry past maxDeliveries: say which, as
  // WARN where the group is otherwise fine, next to the reason where it is worse.
  const entry =
    `entry ${over.id} delivered ${over.deliveries} times, maxDeliveries ${over.maxDeliveries} ` +
    "(action monitor: the janitor leaves it pending)";
  if (verdict.status === "OK" || verdict.status === "UNKNOWN") {
    return { status: "WARN", reason: `${entry}; ${verdict.reason}` };
  }
  return { ...verdict, reason: `${verdict.reason}; ${entry}` };
}

/** The run of readable samples the verdict is judged on, or the verdict when there is none yet. */
function readableRun(samples: readonly StatusSample[]): ReadableSample[] | Verdict {
  const latest = samples[samples.length - 1];
  if (latest === undefined) {
    return { status: "UNKNOWN", reason: "not sampled yet", provisional: true };
  }
  if (!latest.readable) return { status: "ERROR", reason: `cannot read: ${latest.error}` };
  const start = samples.findLastIndex((sample) => !sample.readable) + 1;
  const run = samples.slice(start) as ReadableSample[];
  if (run.length < 2) {
    return {
      status: "UNKNOWN",
      reason: "one sample so far: a verdict needs two (status.intervalMs apart)",
      provisional: true,
    };
  }
  return run;
}

/** What the rules after REWIND share: the run's ends and when a consumer last tried to read. */
interface RunView {
  run: readonly ReadableSample[];
  first: ReadableSample;
  latest: ReadableSample;
  spanText: string;
  attemptAt: number | undefined;
}

/** STOP: work waits (lag, due entries, the retry lane's too) and no consumer was seen. */
function stopOf(view: RunView, settings: JudgeSettings): Verdict | undefined {
  const { latest, attemptAt } = view;
  // Seen: a read attempt within the window (seenWithinMs) before the latest sample, whatever
  // the samples' spacing (slow rounds stretch a window of samples far beyond its duration).
  const seen = attemptAt !== undefined && latest.atMs - attemptAt < settings.seenWithinMs;
  const dueCounts = settings.readAttemptsReported !== false;
  // A group's retry lane is its work too (its consumers read both): waiting there counts alike.
  const laneWaits = (latest.retryLaneLag ?? 0) > 0 || (dueCounts && (latest.retryLaneDue ?? 0) > 0);
  const waits = behind(latest) || (dueCounts && latest.due > 0) || laneWaits;
  if (!waits || seen) return undefined;
  const laneWork = laneWaits
    ? `; retry lane lag ${latest.retryLaneLag ?? "unknown"}, ${latest.retryLaneDue ?? 0} due`
    : "";
  const work = `${lagText(latest)}, ${latest.due} due pending${laneWork}`;
  const who =
    latest.consumerCount === 0
      ? "the group has no consumer"
      : `no consumer read in ${secs(settings.seenWithinMs)} ` +
        `(${latest.consumerCount} consumers, ${lastSeen(attemptAt, latest.atMs)})`;
  return { status: "STOP", reason: `work waits (${work}) and ${who}` };
}

/** STALL: lag in every sample and the read position did not move, consumers seen. */
function stallOf(view: RunView, moved: boolean): Verdict | undefined {
  const { run, first, latest } = view;
  if (moved || !run.every((sample) => sample.lag !== null && sample.lag > 0)) return undefined;
  return {
    status: "STALL",
    reason:
      `lag ${first.lag ?? 0} -> ${latest.lag ?? 0} and the read position stayed at ` +
      `${positionText(latest)} for ${view.spanText} while consumers were seen ` +
      `(${lastSeen(view.attemptAt, latest.atMs)})`,
  };
}

/** STUCK: the oldest pending entry idle past stuckAfterMs in every sample. */
function stuckOf(view: RunView, stuck: number): Verdict | undefined {
  const { run, latest } = view;
  if (!run.every((sample) => sample.pending > 0 && sample.oldestPendingIdleMs > stuck)) {
    return undefined;
  }
  return {
    status: "STUCK",
    reason:
      `oldest pending entry idle ${secs(latest.oldestPendingIdleMs)}, past ${secs(stuck)} ` +
      `in every sample for ${view.spanText} (${latest.pending} pending, ${latest.due} due)`,
  };
}

/**
 * WARN: as Burrow, a lag that touched 0 within the window is a group keeping up (steady load
 * fluctuates), so WARN needs lag > 0 in every sample and more at the end than at the start.
 */
function growingLagOf(view: RunView, moved: boolean): Verdict | undefined {
  const { run, first, latest } = view;
  const lagged = run.every((sample) => sample.lag !== null && sample.lag > 0);
  if (!moved || !lagged || (latest.lag ?? 0) <= (first.lag ?? 0)) return undefined;
  const read =
    first.entriesRead !== null && latest.entriesRead !== null
      ? `consumers read ${rate((latest.entriesRead - first.entriesRead) / ((latest.atMs - first.atMs) / 1000))}`
      : "the read position moves";
  return {
    status: "WARN",
    reason: `lag ${latest.lag} and growing: ${first.lag} -> ${latest.lag} in ${view.spanText} while ${read}`,
  };
}

/** The rules in their order over the readable run (see judgeGroup); the first match wins. */
function judgeRun(samples: readonly StatusSample[], settings: JudgeSettings): Verdict {
  const run = readableRun(samples);
  if (!Array.isArray(run)) return run;
  const first = run[0] as ReadableSample;
  const latest = run[run.length - 1] as ReadableSample;
  const view: RunView = {
    run,
    first,
    latest,
    spanText: secs(latest.atMs - first.atMs),
    attemptAt: lastAttemptAt(run),
  };
  const moved = positionMoved(run);
  return (
    rewindOf(run) ??
    stopOf(view, settings) ??
    stallOf(view, moved) ??
    stuckOf(view, settings.stuckAfterMs) ??
    growingLagOf(view, moved) ??
    unknownLagOf(latest) ?? {
      status: "OK",
      reason: `lag ${latest.lag}, ${latest.pending} pending, ${latest.due} due over ${view.spanText}`,
    }
  );
}
