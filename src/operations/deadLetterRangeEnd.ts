import type { ResolvedGroup } from "../core/resolveGroup.js";
import { compareStreamIds, MAX_ID_PART } from "../core/streamIds.js";
import { redisNowMs } from "../redis/redisNowMs.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import { lastDeadLetterId } from "./deadLetterScan.js";

/**
 * The last id a purge or a redrive may reach: the dead-letter stream's last one, or the
 * olderThanMs cutoff before it (a dead letter's age is its id's time, on the Redis clock: README
 * "Operating", dlq purge --older-than); "empty" without dead letters, "before-epoch" when the
 * cutoff is before 0.
 */
export async function deadLetterRangeEnd(
  redis: ScriptedRedis,
  group: ResolvedGroup,
  olderThanMs: number | undefined,
): Promise<{ endId: string } | "empty" | "before-epoch"> {
  const lastId = await lastDeadLetterId(redis, group);
  if (lastId === undefined) return "empty";
  if (olderThanMs === undefined) return { endId: lastId };
  // XRANGE reads a bare millisecond end as `<ms>-<max seq>`: every id of that millisecond.
  const cutoffMs = (await redisNowMs(redis)) - olderThanMs;
  if (cutoffMs < 0) return "before-epoch";
  const cutoff = `${cutoffMs}-${MAX_ID_PART}`;
  return { endId: compareStreamIds(cutoff, lastId) < 0 ? cutoff : lastId };
}
