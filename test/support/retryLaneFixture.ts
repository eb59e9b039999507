import type { Redis } from "ioredis";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { addStuckEntries, numberedBodies } from "./fabricatePel.js";
import { uniquePrefix } from "./redisServer.js";
import { groupConfig } from "./sweepHarness.js";

export interface LaneWork {
  stream: string;
  group: ResolvedGroup;
  lane: string;
}

/**
 * A source group `workers` that read and acknowledged everything (lag 0, nothing pending), and
 * its retry lane holding `copies` copies of which 3 are delivered to `c1` and pending, the rest
 * not delivered yet. With `dueMinIdleMs`, the group's minIdleMs, and the first pending copy is
 * made idle for an hour (due).
 */
export async function laneWithWork(
  redis: Redis,
  name: string,
  copies: number,
  dueMinIdleMs?: number,
): Promise<LaneWork> {
  const stream = uniquePrefix(name);
  const ids = await addStuckEntries(redis, stream, "workers", numberedBodies(2));
  await redis.xack(stream, "workers", ...ids);
  const group = groupConfig(stream, {
    retryLane: true,
    ...(dueMinIdleMs === undefined ? {} : { minIdleMs: dueMinIdleMs }),
  });
  const lane = group.retryLaneStream ?? "";
  await redis.xgroup("CREATE", lane, "workers", "0", "MKSTREAM");
  for (let i = 0; i < copies; i += 1) await redis.xadd(lane, "*", "n", String(i));
  const read = (await redis.call(
    ...["XREADGROUP", "GROUP", "workers", "c1", "COUNT", 3, "STREAMS", lane, ">"],
  )) as [string, [string, string[]][]][];
  if (dueMinIdleMs !== undefined) {
    const first = read[0]?.[1][0]?.[0] ?? "";
    await redis.call("XCLAIM", lane, "workers", "c1", 0, first, "IDLE", 3_600_000, "JUSTID");
  }
  return { stream, group, lane };
}
