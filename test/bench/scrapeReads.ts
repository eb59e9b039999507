/**
 * `npm run bench -- --only=r`: the scrape's read of 1,000 groups (250 streams x 4 groups, a few
 * pending entries each) on one server and over three Cluster masters, by read path: the default
 * (what /metrics runs), the commands without scripts (`scripted: false`, what `inspect` runs for
 * the read-only operator user) and the group status read (`consumers`). Wall time per read in
 * the bench process, and the Redis time per read from INFO commandstats (scripts count whole,
 * the commands they call not again), summed over the masters on Cluster.
 */
import type { Cluster, Redis } from "ioredis";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { readGroupSnapshots, type ReadOptions } from "../../src/scrape/readGroupSnapshots.js";
import { startRedisCluster } from "../support/redisCluster.js";
import { startRedis } from "../support/redisServer.js";
import { parseCommandStats } from "../support/commandStats.js";
import { scrapeConnections, seedGroups } from "./clusterScrape.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { median } from "./stats.js";
import { fmt, type Table } from "./table.js";

const SCRIPTS = new Set(["eval", "evalsha", "eval_ro", "evalsha_ro"]);
const NOT_THE_READ = new Set(["info", "config|resetstat", "cluster|slots", "cluster|info", "ping"]);
const NOT_THE_READ_PREFIX = ["client|", "command|", "script|"];

/** Redis µs of the read: the scripts' own time when scripts ran, else every command's. */
function readUsec(infos: readonly string[]): number {
  let scripts = 0;
  let commands = 0;
  for (const info of infos) {
    for (const [name, stat] of Object.entries(parseCommandStats(info))) {
      if (NOT_THE_READ.has(name) || NOT_THE_READ_PREFIX.some((p) => name.startsWith(p))) continue;
      if (SCRIPTS.has(name)) scripts += stat.usec;
      else commands += stat.usec;
    }
  }
  return scripts > 0 ? scripts : commands;
}

interface PathFigures {
  setup: string;
  medianMs: number;
  maxMs: number;
  redisUsecPerRead: number;
}

async function measure(
  setup: string,
  client: Redis | Cluster,
  admins: readonly Redis[],
  groups: ResolvedGroup[],
  options: Omit<ReadOptions, "timeoutMs">,
  runs: number,
): Promise<PathFigures> {
  // One read to load the script and warm the connection, not counted.
  await readGroupSnapshots(client, groups, { timeoutMs: 10_000, ...options });
  await Promise.all(admins.map((admin) => admin.call("CONFIG", "RESETSTAT")));
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const started = performance.now();
    const snapshot = await readGroupSnapshots(client, groups, { timeoutMs: 10_000, ...options });
    times.push(performance.now() - started);
    const ok = snapshot.groups.filter((reading) => reading.state === "ok").length;
    if (ok !== groups.length) throw new Error(`${setup}: read ${ok} of ${groups.length} groups`);
  }
  const infos = await Promise.all(admins.map((admin) => admin.info("commandstats")));
  return {
    setup,
    medianMs: median(times),
    maxMs: Math.max(...times),
    redisUsecPerRead: readUsec(infos) / runs,
  };
}

export async function scrapeReadsScenario(options: BenchOptions): Promise<ScenarioResult> {
  const runs = options.quick ? 10 : 40;
  const server = await startRedis();
  const cluster = await startRedisCluster();
  const serverClient = server.client();
  const seeder = cluster.client();
  const { metricsServer, metricsCluster } = scrapeConnections(server.url, cluster);
  try {
    const serverGroups = await seedGroups(serverClient, "bench:reads");
    const clusterGroups = await seedGroups(seeder, "bench:reads");
    const masters = cluster.masters.map((node) => node.client());
    const status = { consumers: { janitorConsumer: "stream-janitor" } };
    const figures: PathFigures[] = [];
    const paths: [
      string,
      Redis | Cluster,
      Redis[],
      ResolvedGroup[],
      Omit<ReadOptions, "timeoutMs">,
    ][] = [
      [
        "one server, scrape (default)",
        metricsServer,
        [serverClient],
        serverGroups,
        { perConsumer: false },
      ],
      [
        "one server, scrape, scripted: false",
        metricsServer,
        [serverClient],
        serverGroups,
        { perConsumer: false, scripted: false },
      ],
      [
        "one server, status read",
        metricsServer,
        [serverClient],
        serverGroups,
        { perConsumer: false, ...status },
      ],
      [
        "three masters, scrape (default)",
        metricsCluster,
        masters,
        clusterGroups,
        { perConsumer: false },
      ],
      [
        "three masters, scrape, scripted: false",
        metricsCluster,
        masters,
        clusterGroups,
        { perConsumer: false, scripted: false },
      ],
      [
        "three masters, status read",
        metricsCluster,
        masters,
        clusterGroups,
        { perConsumer: false, ...status },
      ],
    ];
    for (const [setup, client, admins, groups, read] of paths) {
      options.log(`  ${setup}...`);
      figures.push(await measure(setup, client, admins, groups, read, runs));
    }
    const table: Table = {
      title: `Scrape reads at 1,000 groups (250 streams x 4 groups), ${runs} reads per row`,
      columns: ["setup", "median ms", "max ms", "Redis µs/read"],
      rows: figures.map((f) => [
        f.setup,
        fmt(f.medianMs),
        fmt(f.maxMs),
        fmt(f.redisUsecPerRead, 0),
      ]),
      notes: [
        "Redis µs: the scripts' own time when the read ran scripts, else every read command's; summed over the masters.",
      ],
    };
    return { name: "scrape-reads", tables: [table], targets: [], raw: { figures } };
  } finally {
    metricsServer.disconnect();
    metricsCluster.disconnect();
    await cluster.stop();
    await server.stop();
  }
}
