import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import { requeueRefusal, type RequeueConflict } from "../sweep/checkRequeueTarget.js";
import { prepareRedriveTarget, redriveView, type RedriveTo } from "./redriveTarget.js";
import {
  runRedriveDeadLetters,
  type RedriveDeadLettersResult,
} from "../scripts/redriveDeadLetters.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import {
  countDeadLetters,
  DEAD_LETTER_PAGE_SIZE,
  distinctIds,
  type DeadLetterReason,
} from "./deadLetterScan.js";
import { deadLetterRangeEnd } from "./deadLetterRangeEnd.js";
import { HeldBackTally, type HeldBack } from "./HeldBackTally.js";
import type { Progress } from "../core/Progress.js";
import type { RateLimiter } from "./RateLimiter.js";

export interface RedriveOptions {
  /** At most this many dead letters (Infinity: all). */
  limit: number;
  reason: DeadLetterReason | undefined;
  /** Only dead letters dead-lettered at least this long ago (by their id, on the Redis clock). */
  olderThanMs?: number | undefined;
  /** Only these dead letters (`--id`); undefined: every dead letter of the group. */
  ids?: readonly string[];
  dryRun: boolean;
  /** `lane`: into the group's own retry lane, whatever its action; undefined: its requeue target. */
  to?: RedriveTo;
  limiter: RateLimiter;
  progress?: Progress;
  /** Stops at the next page boundary; what was moved stays moved. */
  signal?: AbortSignal;
  pageSize?: number;
}

/**
 * The `--json` summary README "Operating" shows, plus: the groups of the dead-letter stream that held dead
 * letters back, the `--id` ids that are not dead letters of the group, and the dead letters left
 * behind as too large to copy (each only when there is something to say).
 */
export interface RedriveSummary {
  redriven: number;
  remaining: number;
  dryRun: boolean;
  heldBackBy?: HeldBack[];
  unknownIds?: string[];
  oversizedIds?: string[];
}

/** The redrive was refused before it moved anything: the refusal is `conflict`. */
export class RedriveRefusedError extends Error {
  override name = "RedriveRefusedError";
  constructor(readonly conflict: RequeueConflict) {
    super(requeueRefusal(conflict, "redrive"));
  }
}

/** One script call (scripts/redriveDeadLetters.lua): a range page, or the given ids. */
async function redrivePage(
  redis: ScriptedRedis,
  group: ResolvedGroup,
  page: { cursor: string; endId: string; scanLimit: number; moveLimit: number },
  reason: DeadLetterReason | undefined,
  options: { dryRun: boolean; ids?: readonly string[] },
): Promise<RedriveDeadLettersResult> {
  return runRedriveDeadLetters(redis, {
    deadLetterStream: group.deadLetterStream,
    target: group.requeueStream,
    stream: group.stream,
    group: group.group,
    reason,
    cursor: page.cursor,
    endId: page.endId,
    scanLimit: page.scanLimit,
    limit: page.moveLimit,
    dryRun: options.dryRun,
    ids: options.ids,
  });
}

/**
 * Moves the group's dead letters back to its requeue target (requeueStream, or the source; with
 * `to: "lane"` its own retry lane), by reason and age (as a purge selects them), one
 * script call per page (scripts/redriveDeadLetters.lua): copy and delete are atomic, so a redrive
 * that dies is re-run and never duplicates or loses an entry. Only dead letters that existed when
 * it started are moved: one that comes back dead-lettered again waits for the next redrive. A dead
 * letter that a consumer group of the dead-letter stream still needs stays where it is.
 */
export async function redriveDeadLetters(
  redis: ScriptedRedis,
  configured: ResolvedGroup,
  options: RedriveOptions,
): Promise<RedriveSummary> {
  const group = redriveView(configured, options.to);
  // A copy appended to a stream that other groups read would be delivered to them as well.
  const conflict = await prepareRedriveTarget(redis, group, options.dryRun);
  if (conflict !== undefined) throw new RedriveRefusedError(conflict);
  if (options.ids !== undefined) return redriveIds(redis, group, options.ids, options);
  const end = await deadLetterRangeEnd(redis, group, options.olderThanMs);
  if (typeof end === "string") return nothingToMove(redis, group, options, end);
  const { endId } = end;
  const selected = await countDeadLetters(redis, group, options.reason, endId);
  const toMove = Math.min(selected.movable, options.limit);
  if (options.dryRun) {
    const remaining = (await countDeadLetters(redis, group, options.reason)).total - toMove;
    return { redriven: toMove, remaining, dryRun: true, ...selected.heldBack.field() };
  }
  options.progress?.start(toMove);
  const pageSize = options.pageSize ?? DEAD_LETTER_PAGE_SIZE;
  const oversizedIds: string[] = [];
  const heldBack = new HeldBackTally();
  let cursor = "0-0";
  let redriven = 0;
  let scannedAll = false;
  try {
    while (redriven < toMove && options.signal?.aborted !== true) {
      const allowed = await options.limiter.acquire(Math.min(pageSize, toMove - redriven));
      const page = await redrivePage(
        redis,
        group,
        { cursor, endId, scanLimit: pageSize, moveLimit: allowed },
        options.reason,
        { dryRun: false },
      );
      options.limiter.refund(allowed - page.moved);
      redriven += page.moved;
      oversizedIds.push(...page.oversizedIds);
      heldBack.add(page.heldBackBy);
      cursor = page.nextCursor;
      options.progress?.update(redriven);
      if (page.done) {
        scannedAll = true;
        break;
      }
    }
  } finally {
    options.progress?.stop();
  }
  const remaining = (await countDeadLetters(redis, group, options.reason)).total;
  return {
    redriven,
    remaining,
    dryRun: false,
    // A run that stopped early (limit, nothing movable) reports what the count found.
    ...(scannedAll ? heldBack : selected.heldBack).field(),
    ...(oversizedIds.length > 0 ? { oversizedIds } : {}),
  };
}

/** No range: no dead letters at all, or an age cutoff before 1970 (every dead letter remains). */
async function nothingToMove(
  redis: ScriptedRedis,
  group: ResolvedGroup,
  options: RedriveOptions,
  why: "empty" | "before-epoch",
): Promise<RedriveSummary> {
  const remaining =
    why === "empty" ? 0 : (await countDeadLetters(redis, group, options.reason)).total;
  return { redriven: 0, remaining, dryRun: options.dryRun };
}

/** `--id`: the given dead letters only, at most a page of ids per script call. */
async function redriveIds(
  redis: ScriptedRedis,
  group: ResolvedGroup,
  ids: readonly string[],
  options: RedriveOptions,
): Promise<RedriveSummary> {
  const pageSize = options.pageSize ?? DEAD_LETTER_PAGE_SIZE;
  const wanted = distinctIds(ids);
  const heldBack = new HeldBackTally();
  const unknownIds: string[] = [];
  const oversizedIds: string[] = [];
  let redriven = 0;
  let next = 0;
  options.progress?.start(wanted.length);
  try {
    while (next < wanted.length && options.signal?.aborted !== true) {
      const ask = Math.min(pageSize, wanted.length - next);
      const allowed = options.dryRun ? ask : await options.limiter.acquire(ask);
      const chunk = wanted.slice(next, next + allowed);
      next += chunk.length;
      const limits = {
        cursor: "0-0",
        endId: "+",
        scanLimit: chunk.length,
        moveLimit: chunk.length,
      };
      const page = await redrivePage(redis, group, limits, undefined, {
        dryRun: options.dryRun,
        ids: chunk,
      });
      if (!options.dryRun) options.limiter.refund(allowed - page.moved);
      redriven += page.moved;
      heldBack.add(page.heldBackBy);
      unknownIds.push(...page.unknownIds);
      oversizedIds.push(...page.oversizedIds);
      options.progress?.update(redriven);
    }
  } finally {
    options.progress?.stop();
  }
  const total = (await countDeadLetters(redis, group, undefined)).total;
  return {
    redriven,
    remaining: options.dryRun ? total - redriven : total,
    dryRun: options.dryRun,
    ...heldBack.field(),
    unknownIds,
    ...(oversizedIds.length > 0 ? { oversizedIds } : {}),
  };
}
