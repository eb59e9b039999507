import type { ScriptedRedis } from "../redis/scriptedRedis.js";
import type { ResolvedGroup } from "../sweep/resolveGroup.js";
import {
  DEAD_LETTER_PAGE_SIZE,
  lastDeadLetterId,
  type DeadLetterReason,
} from "./deadLetterScan.js";
import type { Progress } from "./progress.js";
import { compareStreamIds, redisNowMs } from "./streamIds.js";

export interface PurgeOptions {
  /** Only dead letters added at least this long ago (by their id, on the Redis clock). */
  olderThanMs: number | undefined;
  reason: DeadLetterReason | undefined;
  dryRun: boolean;
  progress?: Progress;
  pageSize?: number;
  /** Stops at the next page boundary (SIGINT/SIGTERM): each page is one script, done or not. */
  signal?: AbortSignal;
}

export interface PurgeSummary {
  purged: number;
  remaining: number;
  dryRun: boolean;
}

interface PurgePage {
  nextCursor: string;
  deleted: number;
  done: boolean;
}

function parsePurgePage(reply: unknown): PurgePage {
  if (!Array.isArray(reply) || reply.length < 4) {
    throw new Error(`unexpected purgeDeadLetters reply: ${JSON.stringify(reply)}`);
  }
  return { nextCursor: String(reply[0]), deleted: Number(reply[2]), done: Number(reply[3]) === 1 };
}

async function purgeRange(
  redis: ScriptedRedis,
  group: ResolvedGroup,
  endId: string,
  reason: DeadLetterReason | undefined,
  dryRun: boolean,
  pageSize: number,
  progress: Progress | undefined,
  signal?: AbortSignal,
): Promise<number> {
  let cursor = "0-0";
  let total = 0;
  for (;;) {
    const page = parsePurgePage(
      await redis.sjPurgeDeadLetters(
        1,
        group.deadLetterStream,
        group.stream,
        group.group,
        cursor,
        endId,
        pageSize,
        pageSize,
        reason ?? "",
        "",
        dryRun ? "1" : "0",
      ),
    );
    total += page.deleted;
    cursor = page.nextCursor;
    progress?.update(total);
    if (page.done || signal?.aborted === true) return total;
  }
}

/**
 * Deletes the group's dead letters (of one reason, older than a threshold), one script call per
 * page (scripts/purgeDeadLetters.lua). Dead letters of other groups sharing the dead-letter
 * stream are left alone. Only those that existed when the purge started are considered.
 */
export async function purgeDeadLetters(
  redis: ScriptedRedis,
  group: ResolvedGroup,
  options: PurgeOptions,
): Promise<PurgeSummary> {
  const pageSize = options.pageSize ?? DEAD_LETTER_PAGE_SIZE;
  const lastId = await lastDeadLetterId(redis, group);
  if (lastId === undefined) return { purged: 0, remaining: 0, dryRun: options.dryRun };
  let endId = lastId;
  if (options.olderThanMs !== undefined) {
    // XRANGE reads a bare millisecond end as `<ms>-<max seq>`: every id of that millisecond.
    const cutoffMs = (await redisNowMs(redis)) - options.olderThanMs;
    if (cutoffMs < 0) return { purged: 0, remaining: await countAll(), dryRun: options.dryRun };
    const cutoff = `${cutoffMs}-18446744073709551615`;
    if (compareStreamIds(cutoff, lastId) < 0) endId = cutoff;
  }
  const selected = await purgeRange(redis, group, endId, options.reason, true, pageSize, undefined);
  if (options.dryRun) {
    return { purged: selected, remaining: (await countAll()) - selected, dryRun: true };
  }
  options.progress?.start(selected);
  let purged: number;
  try {
    purged = await purgeRange(
      redis,
      group,
      endId,
      options.reason,
      false,
      pageSize,
      options.progress,
      options.signal,
    );
  } finally {
    options.progress?.stop();
  }
  return { purged, remaining: await countAll(), dryRun: false };

  function countAll(): Promise<number> {
    return purgeRange(redis, group, "+", options.reason, true, pageSize, undefined);
  }
}
