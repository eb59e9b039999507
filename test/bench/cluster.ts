/**
 * `npm run bench -- --only=c`: Redis Cluster figures. Sweep throughput over three masters against
 * one server (one leader sweeping groups one after another, as the daemon does, and one sweep per
 * master at once, to see whether one leader is the limit), the scrape at 1,000 groups over three
 * masters against one server, and the take-over after kill -9 of the leader on a cluster.
 */
import type { Cluster, Redis } from "ioredis";
import { pino } from "pino";
import { readGroupSnapshots } from "../../src/metrics/readGroupSnapshots.js";
import { connectRedis } from "../../src/redis/connectRedis.js";
import { registerScripts, type ScriptedRedis } from "../../src/redis/scriptedRedis.js";
import type { Fence } from "../../src/lease/types.js";
import { resolveGroup, type ResolvedGroup } from "../../src/sweep/resolveGroup.js";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import { startRedisCluster, type RedisCluster } from "../support/redisCluster.js";
import { startRedis } from "../support/redisServer.js";
import { waitFor } from "../support/waitFor.js";
import {
  daemonConfig,
  gauge,
  httpGet,
  startDaemonChild,
  type DaemonChild,
} from "./daemonProcess.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { seedStuckPel } from "./seed.js";
import { median } from "./stats.js";
import { fmt, type Table } from "./table.js";

const LEASE_KEY = "stream-janitor:lease";
const SERVER_FENCE: Fence = { key: LEASE_KEY, value: "bench/1/cluster" };
const CLUSTER_FENCE: Fence = { key: LEASE_KEY, value: "bench/1/cluster", slotToken: 1 };
const silent = pino({ level: "silent" });

function group(stream: string, name = "workers"): ResolvedGroup {
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
        consumerName: "stream-janitor",
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

interface ThroughputRun {
  setup: string;
  entries: number;
  seconds: number;
}

async function throughput(
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

/** 1,000 groups with a few pending entries each: 250 streams with 4 groups. */
async function seedGroups(redis: Redis | Cluster, prefix: string): Promise<ResolvedGroup[]> {
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

async function scrapeTimes(
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

async function isLeader(child: DaemonChild): Promise<boolean> {
  try {
    return (
      gauge((await httpGet(`${child.httpUrl}/metrics`, 1000)).body, "stream_janitor_leader") === 1
    );
  } catch {
    return false;
  }
}

async function takeOverTimes(
  options: BenchOptions,
  cluster: RedisCluster,
  runs: number,
): Promise<number[]> {
  const config = {
    ...daemonConfig(cluster.seedUrl, {
      lease: { ttlMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 },
      groups: [{ stream: "bench:takeover", group: "workers" }],
    }),
    redis: { url: cluster.seedUrl, mode: "cluster", nodes: cluster.seedNodes },
  };
  const times: number[] = [];
  let leader = await startDaemonChild(options.cliPath, config);
  await waitFor(() => isLeader(leader), { timeoutMs: 20_000, what: "a leader" });
  let standby = await startDaemonChild(options.cliPath, config);
  try {
    for (let i = 0; i < runs; i += 1) {
      await waitFor(async () => (await httpGet(`${standby.httpUrl}/readyz`)).status === 200, {
        timeoutMs: 20_000,
        what: "the standby to be ready",
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const killedAt = performance.now();
      leader.kill("SIGKILL");
      const next = standby;
      await waitFor(() => isLeader(next), { timeoutMs: 20_000, what: "the standby to take over" });
      times.push(performance.now() - killedAt);
      options.log(`  take-over ${i + 1}: ${fmt(times.at(-1) ?? 0, 0)} ms`);
      await leader.stop();
      leader = standby;
      standby = await startDaemonChild(options.cliPath, config);
    }
  } finally {
    await Promise.all([leader.stop(), standby.stop()]);
  }
  return times;
}

export async function clusterScenario(options: BenchOptions): Promise<ScenarioResult> {
  const server = await startRedis();
  const cluster = await startRedisCluster();
  const serverClient = server.client();
  const seeder = cluster.client();
  try {
    options.log("  sweep throughput...");
    const sweeps = await throughput(options, serverClient, server.url, cluster, seeder);

    options.log("  scrape at 1,000 groups...");
    const runs = options.quick ? 5 : 20;
    const serverGroups = await seedGroups(serverClient, "bench:scrape");
    const clusterGroups = await seedGroups(seeder, "bench:scrape");
    const metricsServer = connectRedis(
      { url: server.url, password: "", passwordFile: "" },
      { connectionName: "m", commandTimeoutMs: 10_000, logger: silent },
    );
    const metricsCluster = connectRedis(
      {
        url: cluster.seedUrl,
        password: "",
        passwordFile: "",
        mode: "cluster",
        nodes: [...cluster.seedNodes],
      },
      { connectionName: "m", commandTimeoutMs: 10_000, logger: silent },
    );
    const scrapeServer = await scrapeTimes(metricsServer, serverGroups, runs);
    const scrapeCluster = await scrapeTimes(metricsCluster, clusterGroups, runs);
    metricsServer.disconnect();
    metricsCluster.disconnect();
    options.log(
      `  scrape: one server ${fmt(median(scrapeServer))} ms, three masters ${fmt(median(scrapeCluster))} ms`,
    );

    options.log("  take-over on the cluster...");
    const takeovers = await takeOverTimes(options, cluster, options.quick ? 2 : 5);

    const tables: Table[] = [
      {
        title: "Cluster: sweep throughput (requeue, batchSize 1000, six groups)",
        columns: ["setup", "entries", "seconds", "entries/s"],
        rows: sweeps.map((run) => [
          run.setup,
          fmt(run.entries),
          fmt(run.seconds, 2),
          fmt(run.entries / run.seconds),
        ]),
        notes: [
          "Two CPU cores shared by the test, the janitor and every redis-server: the concurrent row says whether one leader is the limit here.",
        ],
      },
      {
        title: "Cluster: scrape at 1,000 groups (250 streams x 4 groups, readGroupSnapshots)",
        columns: ["setup", "median ms", "max ms"],
        rows: [
          ["one server, one pipeline", fmt(median(scrapeServer)), fmt(Math.max(...scrapeServer))],
          [
            "three masters, one pipeline per node",
            fmt(median(scrapeCluster)),
            fmt(Math.max(...scrapeCluster)),
          ],
        ],
      },
      {
        title: "Cluster: take-over after kill -9 of the leader (ttl 1500 ms, retry 200 ms)",
        columns: ["runs", "median ms", "max ms"],
        rows: [[takeovers.length, fmt(median(takeovers), 0), fmt(Math.max(...takeovers), 0)]],
      },
    ];
    return {
      name: "cluster",
      tables,
      targets: [],
      raw: { sweeps, scrapeServer, scrapeCluster, takeovers },
    };
  } finally {
    await cluster.stop();
    await server.stop();
  }
}
