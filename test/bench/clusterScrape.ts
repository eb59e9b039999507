/**
 * The scrape at 1,000 groups for `npm run bench -- --only=c`: readGroupSnapshots on one server
 * (one pipeline) and over three masters (one pipeline per node).
 */
import type { Cluster, Redis } from "ioredis";
import { readGroupSnapshots } from "../../src/scrape/readGroupSnapshots.js";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { connectRedis } from "../../src/redis/connectRedis.js";
import type { RedisClient } from "../../src/redis/RedisClient.js";
import { group, silent } from "./clusterThroughput.js";

/** 1,000 groups with a few pending entries each: 250 streams with 4 groups. */
export async function seedGroups(redis: Redis | Cluster, prefix: string): Promise<ResolvedGroup[]> {
  const groups: ResolvedGroup[] = [];
  for (let s = 0; s < 250; s += 1) {
    const stream = `${prefix}:${s}`;
    const pipeline = redis.pipeline();
    for (let g = 0; g < 4; g += 1) {
      pipeline.call("XGROUP", "CREATE", stream, `g${g}`, "$", "MKSTREAM");
      groups.push(group(stream, `g${g}`));
    }
    for (let e = 0; e < 5; e += 1) pipeline.call("XADD", stream, "*", "n", String(e));
    for (let g = 0; g < 4; g += 1)
      pipeline.call("XREADGROUP", "GROUP", `g${g}`, "c", "COUNT", 3, "STREAMS", stream, ">");
    await pipeline.exec();
  }
  return groups;
}

export async function scrapeTimes(
  redis: Parameters<typeof readGroupSnapshots>[0],
  groups: ResolvedGroup[],
  runs: number,
): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const started = performance.now();
    const snapshot = await readGroupSnapshots(redis, groups, {
      timeoutMs: 10_000,
      perConsumer: false,
    });
    times.push(performance.now() - started);
    const ok = snapshot.groups.filter((reading) => reading.state === "ok").length;
    if (ok !== groups.length) throw new Error(`scrape read ${ok} of ${groups.length} groups`);
  }
  return times;
}

/** The scrape's own connections, as the daemon opens them: to the one server and to the Cluster. */
export function scrapeConnections(
  serverUrl: string,
  cluster: { seedUrl: string; seedNodes: readonly string[] },
): { metricsServer: RedisClient; metricsCluster: RedisClient } {
  const options = { connectionName: "m", commandTimeoutMs: 10_000, logger: silent };
  const account = { password: "", passwordFile: "" };
  return {
    metricsServer: connectRedis({ url: serverUrl, ...account }, options),
    metricsCluster: connectRedis(
      { url: cluster.seedUrl, ...account, mode: "cluster", nodes: [...cluster.seedNodes] },
      options,
    ),
  };
}
