import type { Logger } from "pino";
import { requireGroup } from "../redis/requireGroup.js";
import type { ScriptedRedis } from "../redis/scriptedRedis.js";
import { checkRequeueTarget } from "./checkRequeueTarget.js";
import { classifySweepError } from "./classifySweepError.js";
import { findReassignCandidates } from "./findReassignCandidates.js";
import { emptyResult, MAX_REPORTED_IDS, type GroupSweepResult } from "./GroupSweepResult.js";
import type { ResolvedGroup } from "./resolveGroup.js";
import type { Fence } from "../lease/types.js";
import { runSweepPage, type PageResult } from "./runSweepPage.js";

/** The janitor's consumer name inside each group; it owns entries only inside one script call. */
export const JANITOR_CONSUMER = "stream-janitor";

export interface SweepContext {
  redis: ScriptedRedis;
  logger: Logger;
  batchSize: number;
  maxEntriesPerGroup: number;
  /** Where each group's scan stopped when the budget ran out; the next sweep resumes there. */
  cursors: Map<string, string>;
  /** The lease to check inside every mutating script; undefined runs unfenced. */
  fence: () => Fence | undefined;
  /** Monotonic milliseconds, for durations. */
  now: () => number;
}

function addPage(result: GroupSweepResult, page: PageResult): void {
  result.pages += 1;
  result.examined += page.examined;
  result.claimed += page.claimed;
  result.requeued += page.requeued;
  result.reassigned += page.reassigned;
  result.deadLetteredMaxDeliveries += page.deadLetteredMaxDeliveries;
  result.deadLetteredAction += page.deadLetteredAction;
  result.deadLettered += page.deadLetteredMaxDeliveries + page.deadLetteredAction;
  result.leftPending += page.leftPending;
  result.ghosts += page.ghostIds.length;
  for (const id of page.ghostIds)
    if (result.ghostIds.length < MAX_REPORTED_IDS) result.ghostIds.push(id);
  for (const id of page.oversizedIds)
    if (result.oversizedIds.length < MAX_REPORTED_IDS) result.oversizedIds.push(id);
}

function report(result: GroupSweepResult, logger: Logger): void {
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
  if (result.leftPending > 0) {
    logger.warn(
      { count: result.leftPending },
      "reassign found no live consumer; entries left pending",
    );
  }
  if (result.oversizedIds.length > 0) {
    logger.error(
      { ids: result.oversizedIds },
      "entries with more fields than one script call can copy were left pending",
    );
  }
  const { claimed, requeued, reassigned, deadLettered, examined, pages, complete, durationMs } =
    result;
  if (result.error !== undefined) {
    logger.error(
      { errorKind: result.errorKind, error: result.error, claimed, examined },
      "group sweep failed",
    );
  } else {
    const level = claimed > 0 ? "info" : "debug";
    logger[level](
      { claimed, requeued, reassigned, deadLettered, examined, pages, complete, durationMs },
      "group swept",
    );
  }
}

/**
 * One sweep of one stream/group pair: pages through the PEL from the saved cursor until it wraps
 * or the budget is spent, one atomic script call per page. Never throws: a failure is reported in
 * the result, so one broken group cannot stop the others.
 */
export async function sweepOnce(
  group: ResolvedGroup,
  context: SweepContext,
  signal: AbortSignal,
): Promise<GroupSweepResult> {
  const logger = context.logger.child({ stream: group.stream, group: group.group });
  const result = emptyResult(group.stream, group.group);
  const startedAt = context.now();
  try {
    if (group.action === "monitor") {
      // Nothing to claim, but a missing or mistyped stream or group is a failure, not a success.
      await requireGroup(context.redis, group.stream, group.group);
      result.complete = true;
      return result;
    }
    const refusal = await checkRequeueTarget(context.redis, group);
    if (refusal !== undefined) {
      result.error = refusal;
      result.errorKind = "refused";
      return result;
    }
    const candidates =
      group.action === "reassign"
        ? await findReassignCandidates(
            context.redis,
            group.stream,
            group.group,
            group.minIdleMs,
            JANITOR_CONSUMER,
          )
        : [];
    let cursor = context.cursors.get(group.id) ?? "0-0";
    while (!signal.aborted) {
      const page = await runSweepPage(context.redis, {
        group,
        janitorConsumer: JANITOR_CONSUMER,
        cursor,
        pageSize: Math.min(context.batchSize, context.maxEntriesPerGroup - result.examined),
        reassignCandidates: candidates,
        fence: context.fence(),
      });
      addPage(result, page);
      cursor = page.nextCursor;
      if (cursor === "0-0") {
        result.complete = true;
        break;
      }
      if (result.examined >= context.maxEntriesPerGroup) break;
    }
    context.cursors.set(group.id, cursor);
  } catch (error) {
    const { kind, message } = classifySweepError(error);
    // Redis' own errors (WRONGTYPE from XINFO, say) do not say which key they are about.
    result.error = message.includes(group.stream) ? message : `${group.id}: ${message}`;
    result.errorKind = kind;
    // A group that vanished or changed type starts from the beginning when it comes back.
    context.cursors.delete(group.id);
  } finally {
    result.durationMs = context.now() - startedAt;
    report(result, logger);
  }
  return result;
}
