import type { Cluster } from "ioredis";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { groupConfig } from "./sweepHarness.js";

/**
 * A group with a live consumer that is caught up: 2 entries read, 1 of them acknowledged. Its
 * pending entry is in work, not due (minIdleMs 10 minutes), however long a failover takes.
 */
export async function caughtUpGroup(redis: Cluster, stream: string): Promise<ResolvedGroup> {
  await redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
  for (let n = 0; n < 2; n += 1) await redis.xadd(stream, "*", "n", String(n));
  const read = (await redis.call(
    "XREADGROUP",
    "GROUP",
    "workers",
    "c1",
    "STREAMS",
    stream,
    ">",
  )) as [string, [string, string[]][]][];
  const [first] = read[0]?.[1] ?? [];
  await redis.xack(stream, "workers", String(first?.[0]));
  return groupConfig(stream, { minIdleMs: 600_000 });
}
