/**
 * `npm run bench -- --only=c`: Redis Cluster figures. Sweep throughput over three masters against
 * one server (clusterThroughput.ts), the scrape at 1,000 groups over three masters against one
 * server (clusterScrape.ts), and the take-over after kill -9 of the leader on a cluster
 * (clusterTakeover.ts).
 */
import { startRedisCluster } from "../support/redisCluster.js";
import { startRedis } from "../support/redisServer.js";
import { scrapeConnections, scrapeTimes, seedGroups } from "./clusterScrape.js";
import { takeOverTimes } from "./clusterTakeover.js";
import { throughput } from "./clusterThroughput.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { median } from "./stats.js";
import { fmt, type Table } from "./table.js";

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
    const { metricsServer, metricsCluster } = scrapeConnections(server.url, cluster);
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
