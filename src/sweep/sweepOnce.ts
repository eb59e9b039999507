import type { Logger } from "pino";
import { requireGroup } from "../redis/requireGroup.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import { checkRequeueTarget } from "./checkRequeueTarget.js";
import { emptyResult, MAX_REPORTED_IDS, type GroupSweepResult } from "./GroupSweepResult.js";
import { PageSizer } from "./PageSizer.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { type Fence } from "../core/fence.js";
import { classifySweepError } from "./sweepErrors.js";
import { errorInReply } from "../redis/redisErrors.js";
import { fenceAboveToken } from "./slotFence.js";
import { slotRefusal } from "../core/slotRule.js";
import { runSweepPage, type PageResult } from "../scripts/sweepPage.js";
import { prepareRetryLane } from "./prepareRetryLane.js";
import { buildDeadLetterIndex } from "./buildDeadLetterIndex.js";
import { reportSweep } from "./reportSweep.js";

export interface SweepContext {
  redis: ScriptedRedis;
  logger: Logger;
  /** At most this many entries claimed by one script call. */
  batchSize: number;
  /** The time budget of one script call; calls are sized to stay under it. */
  maxScriptMs: number;
  maxEntriesPerGroup: number;
  /** The janitor's consumer inside each group; it owns entries only inside one script call. */
  janitorConsumer: string;
  /** Where each group's scan stopped when the budget ran out; the next sweep resumes there. */
  cursors: Map<string, string>;
  /** The lease to check inside every mutating script; undefined runs unfenced. */
  fence: () => Fence | undefined;
  /** Monotonic milliseconds, for durations. */
  now: () => number;
}

function pushBounded(into: string[], ids: readonly string[]): void {
  for (const id of ids) if (into.length < MAX_REPORTED_IDS) into.push(id);
}

function addPage(result: GroupSweepResult, page: PageResult): void {
  result.pages += 1;
  result.windows += page.windows;
  result.longestCallMs = Math.max(result.longestCallMs, page.durationMs);
  result.examined += page.examined;
  result.claimed += page.claimed;
  result.requeued += page.requeued;
  result.reassigned += page.reassigned;
  result.deadLetteredMaxDeliveries += page.deadLetteredMaxDeliveries;
  result.deadLetteredAction += page.deadLetteredAction;
  result.deadLetteredMaxIdle += page.deadLetteredMaxIdle;
  result.deadLettered +=
    page.deadLetteredMaxDeliveries + page.deadLetteredAction + page.deadLetteredMaxIdle;
  result.deadLettersDropped += page.deadLettersDropped;
  result.leftPending += page.leftPending;
  result.claimedFromActiveConsumer += page.claimedFromActiveConsumer;
  result.ghosts += page.ghostIds.length;
  pushBounded(result.ghostIds, page.ghostIds);
  pushBounded(result.oversizedIds, page.oversizedIds);
  result.invalidDeliveryCounts += page.invalidCounts;
  pushBounded(result.invalidDeliveryCountIds, page.invalidCountIds);
  pushBounded(result.requeuedIds, page.requeuedIds);
  pushBounded(result.reassignedIds, page.reassignedIds);
  pushBounded(result.deadLetteredIds, page.deadLetteredIds);
  if (!page.deadLetterIndexed) result.deadLetterIndexPending = true;
}

/** Where the scan of the group's retry lane stopped, apart from the source's cursor. */
export function laneCursorKey(group: ResolvedGroup): string {
  return `${group.id}\u0000retry-lane`;
}

/**
 * Pages through one PEL (the source's, or with `lane` the group's retry lane) from its saved
 * cursor until it wraps (returns true) or the budget is spent, one atomic script call per page.
 */
async function sweepPel(
  group: ResolvedGroup,
  context: SweepContext,
  signal: AbortSignal,
  result: GroupSweepResult,
  lane: string | undefined,
): Promise<boolean> {
  const cursorKey = lane === undefined ? group.id : laneCursorKey(group);
  const sizer = new PageSizer(context.batchSize, context.maxScriptMs);
  let cursor = context.cursors.get(cursorKey) ?? "0-0";
  let rotation = 0;
  let wrapped = false;
  while (!signal.aborted && result.examined < context.maxEntriesPerGroup) {
    const maxClaimed = sizer.maxClaimed;
    const page = await runSweepPage(context.redis, {
      group,
      janitorConsumer: context.janitorConsumer,
      cursor,
      maxClaimed,
      maxExamined: context.maxEntriesPerGroup - result.examined,
      firstWindow: sizer.firstWindow,
      budgetMs: context.maxScriptMs,
      rotation,
      fence: context.fence(),
      ...(lane === undefined ? {} : { lane }),
    });
    addPage(result, page);
    sizer.record({
      durationMs: page.durationMs,
      claimMs: page.claimMs,
      claimed: page.claimed,
      maxClaimed,
      examined: page.examined,
    });
    rotation += page.handedOff;
    cursor = page.nextCursor;
    // Redis answered: a script's own failure (kind `script`), not a connection problem.
    if (page.error !== undefined) throw errorInReply(page.error);
    if (cursor === "0-0") {
      wrapped = true;
      break;
    }
  }
  context.cursors.set(cursorKey, cursor);
  return wrapped;
}

/**
 * What keeps a group from being swept at all, checked before its first page: a group of
 * another slot on Redis Cluster, a requeue target that is not safe, a retry lane that cannot be
 * prepared. Returns the refusal, or undefined (the lane, if any, is then ready).
 */
async function refusalBeforePages(
  group: ResolvedGroup,
  context: SweepContext,
  slotFenced: boolean,
  result: GroupSweepResult,
): Promise<string | undefined> {
  // A fence per slot means Redis Cluster, where one script cannot reach keys of two slots:
  // listed groups were refused at start-up already, discovered ones are refused here.
  const refusal =
    (slotFenced ? slotRefusal(group) : undefined) ??
    (await checkRequeueTarget(context.redis, group));
  if (refusal !== undefined) return refusal;
  // Atomically created (or found) before any copy is written: a refusal changes nothing.
  const lanePrepared = await prepareRetryLane(context.redis, group, context.fence);
  if (lanePrepared.recreated) result.retryLaneRecreated = group.retryLaneStream;
  return lanePrepared.refusal;
}

/** The source's PEL, then the retry lane's (within the same budget); true once both wrapped. */
async function sweepPels(
  group: ResolvedGroup,
  context: SweepContext,
  signal: AbortSignal,
  result: GroupSweepResult,
): Promise<boolean> {
  const sourceDone = await sweepPel(group, context, signal, result, undefined);
  const lane = group.retryLaneStream;
  if (lane === undefined || !sourceDone) return sourceDone;
  return sweepPel(group, context, signal, result, lane);
}

/** Files a failed sweep in its result, and forgets the group's cursors. */
async function recordFailure(
  error: unknown,
  group: ResolvedGroup,
  context: SweepContext,
  result: GroupSweepResult,
): Promise<void> {
  const { kind, message } = classifySweepError(error);
  // Redis' own errors (WRONGTYPE from XINFO, say) do not say which key they are about.
  result.error = message.includes(group.stream) ? message : `${group.id}: ${message}`;
  result.errorKind = kind;
  const fence = kind === "fenced" ? context.fence() : undefined;
  if (fence !== undefined) {
    const seen = await fenceAboveToken(context.redis, fence, group.stream);
    if (seen !== undefined) result.fenceSeen = seen;
  }
  // A group that vanished or changed type starts from the beginning when it comes back.
  context.cursors.delete(group.id);
  context.cursors.delete(laneCursorKey(group));
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
  /** A fence per slot (Redis Cluster); a pass reads its fence once and says so. */
  slotFenced = context.fence()?.slotToken !== undefined,
): Promise<GroupSweepResult> {
  const logger = context.logger.child({ stream: group.stream, group: group.group });
  const result = emptyResult(group.stream, group.group);
  const startedAt = context.now();
  try {
    if (group.action === "monitor") {
      // Nothing to claim, but a missing or mistyped stream or group is a failure, not a success.
      await requireGroup(context.redis, group.stream, group.group);
      // No page runs here: its dead letters (from an earlier action) are indexed all the same.
      await buildDeadLetterIndex(group, context, signal);
      result.complete = true;
      return result;
    }
    const refusal = await refusalBeforePages(group, context, slotFenced, result);
    if (refusal !== undefined) {
      result.error = refusal;
      result.errorKind = "refused";
      return result;
    }
    result.complete = await sweepPels(group, context, signal, result);
    // After the pages: their dead letters are in the stream, where the build finds them.
    if (result.deadLetterIndexPending) await buildDeadLetterIndex(group, context, signal);
    result.interrupted = signal.aborted && !result.complete;
  } catch (error) {
    await recordFailure(error, group, context, result);
  } finally {
    result.durationMs = context.now() - startedAt;
    reportSweep(result, group, logger, signal);
  }
  return result;
}
