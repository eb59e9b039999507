import type { Logger } from "pino";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { LeaseLostError, type LostReason } from "../lease/types.js";
import type { GroupSweepResult } from "./GroupSweepResult.js";

/** What a sweep lost or could not do, one warning each (once per sweep, never per entry). */
function warnAboutLosses(result: GroupSweepResult, group: ResolvedGroup, logger: Logger): void {
  if (result.deadLettersDropped > 0) {
    logger.warn(
      {
        count: result.deadLettersDropped,
        deadLetterStream: group.deadLetterStream,
        deadLetterMaxLen: group.deadLetterMaxLen,
      },
      "dead letters dropped: deadLetterMaxLen trimmed the oldest dead letters away; their data is lost",
    );
  }
  if (result.retryLaneRecreated !== undefined) {
    logger.warn(
      { retryLane: result.retryLaneRecreated },
      "retry lane's group re-created at id 0: the lane was found without it (XGROUP DESTROY by hand?); the copies still in the lane are delivered again, those acknowledged since the last trim included",
    );
  }
  if (result.ghosts > 0) {
    logger.warn(
      {
        count: result.ghosts,
        ids: result.ghostIds,
        idsTruncated: result.ghosts > result.ghostIds.length,
      },
      "ghosts: pending entries whose body was deleted or trimmed; their data is lost",
    );
  }
  warnAboutEntriesLeft(result, group, logger);
}

/** Entries the sweep left pending: no live consumer, an untrusted count, too many fields. */
function warnAboutEntriesLeft(
  result: GroupSweepResult,
  group: ResolvedGroup,
  logger: Logger,
): void {
  if (result.leftPending > 0) {
    // Once per sweep with the count, not per entry or page; deadLetterAfterIdleMs (when set)
    // ends their wait.
    logger.warn(
      { count: result.leftPending, deadLetterAfterIdleMs: group.deadLetterAfterIdleMs ?? 0 },
      "reassign found no live consumer; entries left pending",
    );
  }
  if (result.invalidDeliveryCounts > 0) {
    logger.warn(
      {
        count: result.invalidDeliveryCounts,
        ids: result.invalidDeliveryCountIds,
        idsTruncated: result.invalidDeliveryCounts > result.invalidDeliveryCountIds.length,
      },
      "x-delivery-count is not a canonical non-negative integer; counted as 0",
    );
  }
  if (result.oversizedIds.length > 0) {
    logger.error(
      { ids: result.oversizedIds },
      "entries with more fields than one script call can copy were left pending",
    );
  }
}

/** Why the term's signal ended the sweep, when it was not a stop (stop() or SIGTERM). */
function leaseLoss(signal: AbortSignal): Exclude<LostReason, "stopped"> | undefined {
  const reason: unknown = signal.reason;
  if (!(reason instanceof LeaseLostError) || reason.reason === "stopped") return undefined;
  return reason.reason;
}

function outcomeMessage(interrupted: boolean, lost: LostReason | undefined): string {
  if (!interrupted) return "group swept";
  if (lost === undefined) return "group sweep interrupted by a stop";
  return lost === "superseded"
    ? "group sweep interrupted: a new term (higher fencing token) took over"
    : "group sweep interrupted: lease lost";
}

/** The sweep's one summary line: refused by a fence, failed, or done (or interrupted). */
function logOutcome(result: GroupSweepResult, logger: Logger, signal: AbortSignal): void {
  const { claimed, requeued, reassigned, deadLettered, examined, pages, complete, durationMs } =
    result;
  const { interrupted, windows, longestCallMs } = result;
  if (result.fenceSeen !== undefined) {
    // Not yet a failure: the caller moves the token past the fence if the lease is still ours.
    logger.warn(
      { errorKind: result.errorKind, fenceSeen: result.fenceSeen, claimed, examined },
      "group sweep refused: the stream's fence is above our fencing token",
    );
    return;
  }
  if (result.error !== undefined) {
    logger.error(
      { errorKind: result.errorKind, error: result.error, claimed, examined },
      "group sweep failed",
    );
    return;
  }
  const lost = interrupted ? leaseLoss(signal) : undefined;
  const level =
    lost !== undefined && lost !== "superseded" ? "warn" : claimed > 0 ? "info" : "debug";
  logger[level](
    {
      ...(lost === undefined ? {} : { leaseLost: lost }),
      claimed,
      requeued,
      reassigned,
      deadLettered,
      examined,
      pages,
      windows,
      longestCallMs,
      complete,
      interrupted,
      durationMs,
    },
    outcomeMessage(interrupted, lost),
  );
}

/** Logs a finished group sweep: its losses first, then its outcome. */
export function reportSweep(
  result: GroupSweepResult,
  group: ResolvedGroup,
  logger: Logger,
  signal: AbortSignal,
): void {
  warnAboutLosses(result, group, logger);
  logOutcome(result, logger, signal);
}
