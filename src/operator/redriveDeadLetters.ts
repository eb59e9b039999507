import type { ScriptedRedis } from "../redis/scriptedRedis.js";
import { checkRequeueTarget } from "../sweep/checkRequeueTarget.js";
import type { ResolvedGroup } from "../sweep/resolveGroup.js";
import {
  countDeadLetters,
  DEAD_LETTER_PAGE_SIZE,
  lastDeadLetterId,
  parseRedrivePage,
  type DeadLetterReason,
} from "./deadLetterScan.js";
import type { Progress } from "./progress.js";
import type { RateLimiter } from "./RateLimiter.js";

export interface RedriveOptions {
  /** At most this many dead letters (Infinity: all). */
  limit: number;
  reason: DeadLetterReason | undefined;
  dryRun: boolean;
  limiter: RateLimiter;
  progress?: Progress;
  /** Stops at the next page boundary; what was moved stays moved. */
  signal?: AbortSignal;
  pageSize?: number;
}

/** The contract's `--json` summary, plus the dead letters left behind as too large to copy. */
export interface RedriveSummary {
  redriven: number;
  remaining: number;
  dryRun: boolean;
  oversizedIds?: string[];
}

export class RedriveRefusedError extends Error {
  override name = "RedriveRefusedError";
}

/**
 * Moves the group's dead letters back to its requeue target (requeueStream, or the source), one
 * script call per page (scripts/redriveDeadLetters.lua): copy and delete are atomic, so a redrive
 * that dies is re-run and never duplicates or loses an entry. Only dead letters that existed when
 * it started are moved: one that comes back dead-lettered again waits for the next redrive.
 */
export async function redriveDeadLetters(
  redis: ScriptedRedis,
  group: ResolvedGroup,
  options: RedriveOptions,
): Promise<RedriveSummary> {
  // A copy appended to a stream that other groups read would be delivered to them as well.
  const refusal = await checkRequeueTarget(redis, { ...group, action: "requeue" });
  if (refusal !== undefined) {
    throw new RedriveRefusedError(refusal.replace("refusing to requeue", "refusing to redrive"));
  }
  const endId = await lastDeadLetterId(redis, group);
  if (endId === undefined) return { redriven: 0, remaining: 0, dryRun: options.dryRun };
  const selected = await countDeadLetters(redis, group, options.reason, endId);
  const toMove = Math.min(selected, options.limit);
  if (options.dryRun) {
    const remaining = (await countDeadLetters(redis, group, options.reason)) - toMove;
    return { redriven: toMove, remaining, dryRun: true };
  }
  options.progress?.start(toMove);
  const pageSize = options.pageSize ?? DEAD_LETTER_PAGE_SIZE;
  const oversizedIds: string[] = [];
  let cursor = "0-0";
  let redriven = 0;
  try {
    while (redriven < toMove && options.signal?.aborted !== true) {
      const allowed = await options.limiter.acquire(Math.min(pageSize, toMove - redriven));
      const page = parseRedrivePage(
        await redis.sjRedriveDeadLetters(
          2,
          group.deadLetterStream,
          group.requeueStream,
          group.stream,
          group.group,
          cursor,
          endId,
          pageSize,
          allowed,
          options.reason ?? "",
          "0",
          "",
        ),
      );
      options.limiter.refund(allowed - page.moved);
      redriven += page.moved;
      oversizedIds.push(...page.oversizedIds);
      cursor = page.nextCursor;
      options.progress?.update(redriven);
      if (page.done) break;
    }
  } finally {
    options.progress?.stop();
  }
  const remaining = await countDeadLetters(redis, group, options.reason);
  return {
    redriven,
    remaining,
    dryRun: false,
    ...(oversizedIds.length > 0 ? { oversizedIds } : {}),
  };
}
