/**
 * Sweep throughput for `npm run bench -- --only=c`: the same stuck PELs swept on one server and
 * on three masters, by one leader one group after another (as the daemon does) and by one sweep
 * per master at once (to see whether one leader is the limit).
 */
import type { Cluster, Redis } from "ioredis";
import { pino } from "pino";
import type { Fence } from "../../src/core/fence.js";
import { connectRedis } from "../../src/redis/connectRedis.js";
import { registerScripts, type ScriptedRedis } from "../../src/scripts/scriptedRedis.js";
import { resolveGroup, type ResolvedGroup } from "../../src/core/resolveGroup.js";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import type { RedisCluster } from "../support/redisCluster.js";
import type { BenchOptions } from "./scenario.js";
import { seedStuckPel } from "./seed.js";
import { fmt } from "./table.js";

const LEASE_KEY = "stream-janitor:lease";
const SERVER_FENCE: Fence = { key: LEASE_KEY, value: "bench/1/cluster" };
const CLUSTER_FENCE: Fence = { key: LEASE_KEY, value: "bench/1/cluster", slotToken: 1 };
export const silent = pino({ level: "silent" });

export function group(stream: string, name = "workers"): ResolvedGroup {
  return resolveGroup({
    stream,
    group: name,
    minIdleMs: 60_000,
    maxDeliveries: 5,
    action: "requeue",
    requeueStream: "",
    deadLetterStream: "",
    deadLetterMaxLen: 100_000,
  });
}

function janitor(settings: Parameters<typeof connectRedis>[0], name: string): ScriptedRedis {
  return registerScripts(
    connectRedis(settings, {
      connectionName: `stream-janitor:${name}`,
      commandTimeoutMs: 60_000,
      logger: silent,
    }),
  );
}

async function sweepGroups(
  redis: ScriptedRedis,
  groups: readonly ResolvedGroup[],
  fence: Fence,
  batchSize: number,
): Promise<number> {
  let claimed = 0;
  for (const target of groups) {
    const result = await sweepOnce(
      target,
      {
        redis,
        logger: silent,
        batchSize,
        maxScriptMs: 2,
        janitorConsumer: "stream-janitor",
        maxEntriesPerGroup: Number.MAX_SAFE_INTEGER,
        cursors: new Map(),
        fence: () => fence,
        now: () => performance.now(),
      },
      new AbortController().signal,
    );
    if (result.error !== undefined) throw new Error(`sweep failed: ${result.error}`);
    claimed += result.claimed;
  }
  return claimed;
}

export interface ThroughputRun {
  setup: string;
  entries: number;
  seconds: number;
}

export async function throughput(
  options: BenchOptions,
  server: Redis,
  serverUrl: string,
  cluster: RedisCluster,
  seeder: Cluster,
): Promise<ThroughputRun[]> {
  const perStream = options.quick ? 5_000 : 20_000;
  const batchSize = 1000;
  const runs: ThroughputRun[] = [];
  // Six streams: on one server, or two on each master.
  const serverStreams = Array.from({ length: 6 }, (_, i) => `bench:tp:${i}`);
  for (const stream of serverStreams) await seedStuckPel(server, stream, "workers", perStream);
  await server.set(LEASE_KEY, SERVER_FENCE.value);
  const one = janitor({ url: serverUrl, password: "", passwordFile: "" }, "sweep");
  let started = performance.now();
  const serverClaimed = await sweepGroups(
    one,
    serverStreams.map((s) => group(s)),
    SERVER_FENCE,
    batchSize,
  );
  runs.push({
    setup: "one server, one group at a time",
    entries: serverClaimed,
    seconds: (performance.now() - started) / 1000,
  });
  one.disconnect();

  const settings = {
    url: cluster.seedUrl,
    password: "",
    passwordFile: "",
    mode: "cluster" as const,
    nodes: [...cluster.seedNodes],
  };
  for (const concurrent of [false, true]) {
    const streams = [
      ...cluster.keysOnEveryMaster(`bench:tp:${String(concurrent)}:a`),
      ...cluster.keysOnEveryMaster(`bench:tp:${String(concurrent)}:b`),
    ];
    for (const stream of streams)
      await seedStuckPel(seeder as unknown as Redis, stream, "workers", perStream);
    const redis = janitor(settings, "sweep");
    await redis.ping();
    started = performance.now();
    let claimed: number;
    if (concurrent) {
      // One sweep per master at a time: streams [i] and [i + 3] live on master i.
      const perMaster = [0, 1, 2].map((i) =>
        [streams[i], streams[i + 3]].map((s) => group(s ?? "")),
      );
      const counts = await Promise.all(
        perMaster.map((groups) => sweepGroups(redis, groups, CLUSTER_FENCE, batchSize)),
      );
      claimed = counts.reduce((a, b) => a + b, 0);
    } else {
      claimed = await sweepGroups(
        redis,
        streams.map((s) => group(s)),
        CLUSTER_FENCE,
        batchSize,
      );
    }
    runs.push({
      setup: concurrent
        ? "three masters, one group per master at once"
        : "three masters, one group at a time",
      entries: claimed,
      seconds: (performance.now() - started) / 1000,
    });
    redis.disconnect();
  }
  for (const run of runs)
    options.log(`  ${run.setup}: ${fmt(run.entries / run.seconds)} entries/s`);
  return runs;
}
