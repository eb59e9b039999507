import type { Redis } from "ioredis";
import { scanDiscoverPatterns } from "../../src/discovery/discoverGroups.js";
import { waitFor } from "../support/waitFor.js";
import { startRedis } from "../support/redisServer.js";
import {
  cpuTimeMs,
  daemonConfig,
  httpGet,
  memoryStatus,
  startDaemonChild,
} from "./daemonProcess.js";
import { LEASE_KEY } from "./janitorSweep.js";
import { readCommandStats, resetStats } from "./redisStats.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { max, median, sum } from "./stats.js";
import { fmt, type Table, type TargetCheck } from "./table.js";

const GROUP = "workers";
const TOTAL_KEYS = 100_000;
const STREAMS = 2_000;
const RSS_LIMIT_MB = 300;
const SCRAPE_LIMIT_MS = 1000;
/** Timed scrapes per size, after one untimed. */
const SCRAPES = 5;

const tenantStream = (i: number): string => `tenant:${i}:events`;

/** `streams` small streams matching tenant:*:events, each with one group, 10 entries, 5 pending. */
async function createTenantStreams(redis: Redis, streams: number): Promise<void> {
  const chunk = 500;
  for (let start = 0; start < streams; start += chunk) {
    const pipeline = redis.pipeline();
    for (let i = start; i < Math.min(start + chunk, streams); i += 1) {
      const stream = tenantStream(i);
      pipeline.xgroup("CREATE", stream, GROUP, "$", "MKSTREAM");
      for (let n = 0; n < 10; n += 1) pipeline.xadd(stream, "*", "n", String(n));
      pipeline.xreadgroup("GROUP", GROUP, "worker-1", "COUNT", 5, "STREAMS", stream, ">");
    }
    await pipeline.exec();
  }
}

/** Plain string keys around the streams, so SCAN walks a keyspace mostly made of other things. */
async function createOtherKeys(redis: Redis, count: number): Promise<void> {
  const chunk = 10_000;
  for (let start = 0; start < count; start += chunk) {
    const pairs: string[] = [];
    for (let i = start; i < Math.min(start + chunk, count); i += 1) pairs.push(`cache:${i}`, "v");
    await redis.mset(...pairs);
  }
}

interface ScanCost {
  pattern: string;
  wallMsMedian: number;
  wallMsMax: number;
  scanCalls: number;
  xinfoCalls: number;
  serverUsec: number;
  maxCommandUsec: number;
  groups: number;
}

async function measureScan(redis: Redis, pattern: string, runs: number): Promise<ScanCost> {
  const config = {
    groups: [],
    discover: [
      {
        match: pattern,
        groups: "*",
        minIdleMs: 60_000,
        maxDeliveries: 5,
        action: "requeue" as const,
        requeueStream: "",
        deadLetterStream: "",
        deadLetterMaxLen: 100_000,
      },
    ],
    discovery: { intervalMs: 60_000, maxGroups: 10_000 },
  };
  const walls: number[] = [];
  let groups = 0;
  await resetStats(redis);
  await redis.call("SLOWLOG", "RESET");
  for (let run = 0; run < runs; run += 1) {
    const started = performance.now();
    const scan = await scanDiscoverPatterns(() => [redis], config);
    walls.push(performance.now() - started);
    groups = scan.discovered.length;
  }
  const stats = await readCommandStats(redis);
  const scan = stats.scan ?? { calls: 0, usec: 0 };
  const xinfo = stats["xinfo|groups"] ?? { calls: 0, usec: 0 };
  const slow = (await redis.call("SLOWLOG", "GET", 1000)) as [number, number, number, string[]][];
  return {
    pattern,
    wallMsMedian: median(walls),
    wallMsMax: max(walls),
    scanCalls: scan.calls / runs,
    xinfoCalls: xinfo.calls / runs,
    serverUsec: sum(Object.values(stats).map((stat) => stat.usec)) / runs,
    // The discovery's own commands only (the bench's bookkeeping is not counted).
    maxCommandUsec: max(
      slow
        .filter(([, , , args]) => ["SCAN", "XINFO"].includes(String(args[0]).toUpperCase()))
        .map(([, , usec]) => usec),
    ),
    groups,
  };
}

interface ScaleRun {
  groups: number;
  source: "discover" | "groups";
  rssMb: number;
  peakRssMb: number;
  scrapeMsMedian: number;
  scrapeMsMax: number;
  /** The daemon's own CPU time per scrape (user + system), median. */
  cpuMsMedian: number;
  series: number;
}

async function measureScale(
  options: BenchOptions,
  admin: Redis,
  url: string,
  count: number,
  source: ScaleRun["source"],
): Promise<ScaleRun> {
  await admin.flushall();
  await admin.set(LEASE_KEY, "other-host/1/held-by-the-bench", "PX", 3_600_000);
  await createTenantStreams(admin, count);
  // A scrape of 10,000 groups outlasts the default 2 s bound on its Redis reads on a loaded
  // machine, and then exports no gauges at all: the bound is raised so every series is measured.
  const base = daemonConfig(url, {
    metrics: { scrapeTimeoutMs: 60_000 },
    groups:
      source === "groups"
        ? Array.from({ length: count }, (_, i) => ({ stream: tenantStream(i), group: GROUP }))
        : [],
  });
  const child = await startDaemonChild(options.cliPath, {
    ...base,
    ...(source === "discover"
      ? { discover: [{ match: "tenant:*:events" }], discovery: { maxGroups: 100_000 } }
      : {}),
  });
  try {
    const metricsUrl = `${child.httpUrl}/metrics`;
    // A standby (the lease is held elsewhere): what is measured is the cost of holding the
    // groups and exporting them, not of sweeping. Discovery logs its first result; a listed
    // configuration is complete at start-up.
    const ready = source === "discover" ? '"discovered groups changed"' : '"connected to redis"';
    await waitFor(() => child.recentLines.some((line) => line.includes(ready)), {
      timeoutMs: 300_000,
      intervalMs: 200,
      what: `${count} ${source} groups loaded`,
    });
    const latencies: number[] = [];
    const cpu: number[] = [];
    let body = "";
    // One scrape first: the first one also creates every series and warms the code up.
    await httpGet(metricsUrl, 60_000);
    for (let i = 0; i < SCRAPES; i += 1) {
      const cpuBefore = await cpuTimeMs(child.pid);
      const started = performance.now();
      body = (await httpGet(metricsUrl, 60_000)).body;
      latencies.push(performance.now() - started);
      cpu.push((await cpuTimeMs(child.pid)) - cpuBefore);
    }
    const status = await memoryStatus(child.pid);
    options.log(
      `    RSS ${fmt((status?.rssKb ?? 0) / 1024)} MB, scrape ${fmt(median(latencies))} ms, daemon CPU ${fmt(median(cpu))} ms`,
    );
    return {
      groups: count,
      source,
      rssMb: (status?.rssKb ?? Number.NaN) / 1024,
      peakRssMb: (status?.hwmKb ?? Number.NaN) / 1024,
      scrapeMsMedian: median(latencies),
      scrapeMsMax: max(latencies),
      cpuMsMedian: median(cpu),
      series: body.split("\n").filter((line) => line !== "" && !line.startsWith("#")).length,
    };
  } finally {
    await child.stop();
  }
}

/** Scenario 7: what a discover pattern costs Redis, and the daemon's memory and scrape time at scale. */
export async function discoveryScenario(options: BenchOptions): Promise<ScenarioResult> {
  const server = await startRedis([
    "--slowlog-log-slower-than",
    "0",
    "--slowlog-max-len",
    "100000",
  ]);
  const admin = server.client();
  try {
    options.log(`  seeding ${TOTAL_KEYS.toLocaleString("en-US")} keys, ${STREAMS} of them streams`);
    await createTenantStreams(admin, STREAMS);
    await createOtherKeys(admin, TOTAL_KEYS - STREAMS);
    const runs = options.quick ? 3 : 10;
    const scans = [
      await measureScan(admin, "tenant:*:events", runs),
      await measureScan(admin, "tenant:1*:events", runs),
      await measureScan(admin, "nothing:*", runs),
    ];
    for (const scan of scans) options.log(`    ${JSON.stringify(scan)}`);
    await admin.call("CONFIG", "SET", "slowlog-log-slower-than", "10000");
    const scanTable: Table = {
      title: `7a. Discovery scan: ${TOTAL_KEYS.toLocaleString("en-US")} keys, ${STREAMS.toLocaleString("en-US")} of them streams with one group (SCAN COUNT 1000 ... TYPE stream, XINFO GROUPS pipelined)`,
      columns: [
        "pattern",
        "groups found",
        "wall ms (median)",
        "wall ms (max)",
        "SCAN calls",
        "XINFO GROUPS calls",
        "Redis µs per scan",
        "slowest single command µs",
      ],
      rows: scans.map((scan) => [
        scan.pattern,
        scan.groups,
        fmt(scan.wallMsMedian),
        fmt(scan.wallMsMax),
        fmt(scan.scanCalls),
        fmt(scan.xinfoCalls),
        fmt(scan.serverUsec),
        fmt(scan.maxCommandUsec),
      ]),
      notes: [
        `${runs} scans per pattern, one client, loopback; Redis time from INFO commandstats, slowest command from SLOWLOG.`,
      ],
    };

    const sizes = options.quick ? [1_000] : [1_000, 10_000];
    const scale: ScaleRun[] = [];
    for (const size of sizes) {
      // Only discovered: 10,000 listed groups make a file over the 64 KiB configuration cap.
      const sources = ["discover"] as const;
      for (const source of sources) {
        options.log(`  ${size} ${source} groups...`);
        scale.push(await measureScale(options, admin, server.url, size, source));
      }
    }
    const scaleTable: Table = {
      title:
        "7b. Daemon memory and /metrics time by number of groups (standby, one group per stream, 5 pending each)",
      columns: [
        "groups",
        "from",
        "VmRSS MB",
        "VmHWM MB",
        `scrape ms (median of ${SCRAPES})`,
        "scrape ms (max)",
        "daemon CPU ms per scrape (median)",
        "series",
      ],
      rows: scale.map((run) => [
        run.groups.toLocaleString("en-US"),
        run.source,
        fmt(run.rssMb),
        fmt(run.peakRssMb),
        fmt(run.scrapeMsMedian),
        fmt(run.scrapeMsMax),
        fmt(run.cpuMsMedian),
        run.series,
      ]),
      notes: [
        `Measured after the first discovery scan (or start-up for listed groups), one untimed scrape and ${SCRAPES} timed ones (gzip offered, as Prometheus does); RSS from /proc/<pid>/status after them; daemon CPU from /proc/<pid>/stat around each scrape.`,
      ],
    };
    const largest = scale.filter((run) => run.source === "discover").at(-1);
    const targets: TargetCheck[] =
      largest === undefined
        ? []
        : [
            {
              scenario: `7 RSS, ${largest.groups.toLocaleString("en-US")} discovered groups`,
              target: `<= ${RSS_LIMIT_MB} MB`,
              measured: `${fmt(largest.rssMb)} MB`,
              met: largest.rssMb <= RSS_LIMIT_MB,
            },
            {
              scenario: `7 /metrics, ${largest.groups.toLocaleString("en-US")} discovered groups`,
              target: `<= ${SCRAPE_LIMIT_MS} ms`,
              measured: `${fmt(largest.scrapeMsMedian)} ms`,
              met: largest.scrapeMsMedian <= SCRAPE_LIMIT_MS,
            },
          ];
    return { name: "discovery", tables: [scanTable, scaleTable], targets, raw: { scans, scale } };
  } finally {
    await server.stop();
  }
}
