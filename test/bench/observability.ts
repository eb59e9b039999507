import type { Redis } from "ioredis";
import { waitFor } from "../support/waitFor.js";
import { startRedis } from "../support/redisServer.js";
import { daemonConfig, httpGet, startDaemonChild } from "./daemonProcess.js";
import { LEASE_KEY } from "./janitorSweep.js";
import { readCommandStats, resetStats, type CommandStats } from "./redisStats.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { seedStuckPel } from "./seed.js";
import { max, median, percentile, sum } from "./stats.js";
import { fmt, type Table } from "./table.js";

const GROUP = "billing";
const WINDOWS = {
  full: { backgroundMs: 2000, scanMs: 5000, scrapes: 50, scrapesAt1000: 20 },
  quick: { backgroundMs: 1000, scanMs: 3000, scrapes: 20, scrapesAt1000: 8 },
};
const SCAN_PEL = 100_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Small streams, each with a group and a few pending entries. */
async function createGroups(redis: Redis, count: number): Promise<string[]> {
  const streams = Array.from({ length: count }, (_, i) => `events:${i}`);
  const pipeline = redis.pipeline();
  for (const stream of streams) {
    pipeline.xgroup("CREATE", stream, GROUP, "$", "MKSTREAM");
    for (let i = 0; i < 10; i += 1) pipeline.xadd(stream, "*", "n", String(i));
    pipeline.xreadgroup("GROUP", GROUP, "worker-1", "COUNT", 5, "STREAMS", stream, ">");
  }
  await pipeline.exec();
  return streams;
}

/** The lease held by someone else: the daemon stays a standby and never sweeps. */
async function holdLeaseElsewhere(redis: Redis): Promise<void> {
  await redis.set(LEASE_KEY, "other-host/1/held-by-the-bench", "PX", 3_600_000);
}

function totals(stats: CommandStats): { usec: number; calls: number } {
  const values = Object.values(stats);
  return { usec: sum(values.map((s) => s.usec)), calls: sum(values.map((s) => s.calls)) };
}

function topCommands(stats: CommandStats, per: number, count = 4): string {
  return Object.entries(stats)
    .sort(([, a], [, b]) => b.usec - a.usec)
    .slice(0, count)
    .map(([name, stat]) => `${name} ${fmt(stat.calls / per)}×/${fmt(stat.usec / per)} µs`)
    .join(", ");
}

interface ScrapeRun {
  groups: number;
  scrapes: number;
  latencyP50Ms: number;
  latencyP95Ms: number;
  latencyMaxMs: number;
  bodyBytes: number;
  series: number;
  redisUsecPerScrape: number;
  redisCallsPerScrape: number;
  backgroundUsecPerSecond: number;
  backgroundCallsPerSecond: number;
  perScrapeCommands: string;
  scrapeStats: CommandStats;
  backgroundStats: CommandStats;
}

async function measureScrapes(
  options: BenchOptions,
  admin: Redis,
  url: string,
  groupCount: number,
): Promise<ScrapeRun> {
  const windows = options.quick ? WINDOWS.quick : WINDOWS.full;
  await admin.flushall();
  await holdLeaseElsewhere(admin);
  const streams = await createGroups(admin, groupCount);
  const child = await startDaemonChild(
    options.cliPath,
    daemonConfig(url, {
      log: { level: "info" },
      groups: streams.map((stream) => ({ stream, group: GROUP, minIdleMs: 60_000 })),
    }),
  );
  try {
    const metricsUrl = `${child.httpUrl}/metrics`;
    await waitFor(async () => (await httpGet(`${child.httpUrl}/readyz`)).status === 200, {
      timeoutMs: 20_000,
      what: "the daemon to be ready",
      intervalMs: 50,
    });
    for (let i = 0; i < 3; i += 1) await httpGet(metricsUrl);
    await sleep(500);

    await resetStats(admin);
    await sleep(windows.backgroundMs);
    const backgroundStats = await readCommandStats(admin);
    const background = totals(backgroundStats);
    const backgroundUsecPerMs = background.usec / windows.backgroundMs;
    const backgroundCallsPerMs = background.calls / windows.backgroundMs;

    const scrapes = groupCount >= 1000 ? windows.scrapesAt1000 : windows.scrapes;
    const latencies: number[] = [];
    let body = "";
    await resetStats(admin);
    const started = performance.now();
    for (let i = 0; i < scrapes; i += 1) {
      const t0 = performance.now();
      const response = await httpGet(metricsUrl);
      latencies.push(performance.now() - t0);
      if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
      body = response.body;
    }
    const elapsedMs = performance.now() - started;
    const scrapeStats = await readCommandStats(admin);
    const scrapeTotals = totals(scrapeStats);
    return {
      groups: groupCount,
      scrapes,
      latencyP50Ms: median(latencies),
      latencyP95Ms: percentile(latencies, 95),
      latencyMaxMs: max(latencies),
      bodyBytes: body.length,
      series: body.split("\n").filter((line) => line !== "" && !line.startsWith("#")).length,
      redisUsecPerScrape:
        Math.max(0, scrapeTotals.usec - backgroundUsecPerMs * elapsedMs) / scrapes,
      redisCallsPerScrape:
        Math.max(0, scrapeTotals.calls - backgroundCallsPerMs * elapsedMs) / scrapes,
      backgroundUsecPerSecond: backgroundUsecPerMs * 1000,
      backgroundCallsPerSecond: backgroundCallsPerMs * 1000,
      perScrapeCommands: topCommands(scrapeStats, scrapes),
      scrapeStats,
      backgroundStats,
    };
  } finally {
    await child.stop();
  }
}

interface LargeEntriesRun {
  entryMb: number;
  scrapes: number;
  latencyP50Ms: number;
  latencyMaxMs: number;
  /** Bytes Redis wrote to all clients per scrape (INFO stats), the INFO replies subtracted. */
  redisBytesOutPerScrape: number;
  redisUsecPerScrape: number;
  /** Scrapes whose answer had the group's gauges (a timed-out read drops them). */
  sampled: number;
}

async function netOutputBytes(admin: Redis): Promise<number> {
  const info = await admin.info("stats");
  return Number(/^total_net_output_bytes:(\d+)/mu.exec(info)?.[1]);
}

/**
 * One group whose stream holds 50 MB entries where a scrape could look: the first entry, the
 * oldest pending one, the first undelivered one and the last one. The daemon is a standby.
 */
async function measureLargeEntries(
  options: BenchOptions,
  admin: Redis,
  url: string,
): Promise<LargeEntriesRun> {
  const entryMb = 50;
  const scrapes = options.quick ? 5 : 10;
  await admin.flushall();
  await holdLeaseElsewhere(admin);
  const body = Buffer.alloc(entryMb * 1024 * 1024, 120);
  await admin.xgroup("CREATE", "large", GROUP, "$", "MKSTREAM");
  await admin.xadd("large", "*", "body", body);
  await admin.xreadgroup("GROUP", GROUP, "worker-1", "COUNT", 1, "STREAMS", "large", ">");
  await admin.xadd("large", "*", "body", body);
  await admin.xadd("large", "*", "body", body);
  const child = await startDaemonChild(
    options.cliPath,
    daemonConfig(url, {
      log: { level: "info" },
      groups: [{ stream: "large", group: GROUP, minIdleMs: 60_000 }],
    }),
  );
  try {
    const metricsUrl = `${child.httpUrl}/metrics`;
    await waitFor(async () => (await httpGet(`${child.httpUrl}/readyz`)).status === 200, {
      timeoutMs: 20_000,
      what: "the daemon to be ready",
      intervalMs: 50,
    });
    await httpGet(metricsUrl);
    // The INFO reply itself is counted by the next INFO: measure one alone.
    const infoBytes = -(await netOutputBytes(admin)) + (await netOutputBytes(admin));
    await resetStats(admin);
    const before = await netOutputBytes(admin);
    const latencies: number[] = [];
    let sampled = 0;
    for (let i = 0; i < scrapes; i += 1) {
      const t0 = performance.now();
      const response = await httpGet(metricsUrl);
      latencies.push(performance.now() - t0);
      // A scrape that timed out on Redis drops the group's gauges.
      if (response.body.includes('stream_janitor_pending_entries{stream="large"')) sampled += 1;
    }
    const bytes = (await netOutputBytes(admin)) - before - infoBytes;
    const stats = await readCommandStats(admin);
    return {
      entryMb,
      scrapes,
      latencyP50Ms: median(latencies),
      latencyMaxMs: max(latencies),
      redisBytesOutPerScrape: bytes / scrapes,
      redisUsecPerScrape: totals(stats).usec / scrapes,
      sampled,
    };
  } finally {
    await child.stop();
  }
}

interface ScanCost {
  entries: number;
  pages: number;
  wallMs: number;
  serverUsec: number;
}

/** The PEL scan a collector needs for exact max idle: XPENDING pages of 1,000 from the client. */
async function clientScan(admin: Redis, stream: string): Promise<ScanCost> {
  await resetStats(admin);
  const started = performance.now();
  let start = "-";
  let entries = 0;
  let pages = 0;
  let maxIdle = 0;
  for (;;) {
    const page = (await admin.call("XPENDING", stream, GROUP, start, "+", 1000)) as [
      string,
      string,
      number,
      number,
    ][];
    pages += 1;
    entries += page.length;
    for (const [, , idle] of page) if (idle > maxIdle) maxIdle = idle;
    const last = page[page.length - 1];
    if (page.length < 1000 || last === undefined) break;
    start = `(${last[0]}`;
  }
  const wallMs = performance.now() - started;
  const stats = await readCommandStats(admin);
  return { entries, pages, wallMs, serverUsec: stats.xpending?.usec ?? 0 };
}

interface DaemonScan {
  windowMs: number;
  xpendingCallsPerSecond: number;
  xpendingUsecPerCall: number;
  redisUsecPerSecond: number;
  scrapeMs: number;
  commands: string;
}

/** The real collector against one 100,000-entry PEL, with a 1 s scan cadence, as a standby. */
async function daemonScan(options: BenchOptions, admin: Redis, url: string): Promise<DaemonScan> {
  const windows = options.quick ? WINDOWS.quick : WINDOWS.full;
  await holdLeaseElsewhere(admin);
  const child = await startDaemonChild(
    options.cliPath,
    daemonConfig(url, {
      log: { level: "info" },
      metrics: { pelScanIntervalMs: 1000 },
      groups: [{ stream: "scan", group: GROUP, minIdleMs: 60_000 }],
    }),
  );
  try {
    await waitFor(async () => (await httpGet(`${child.httpUrl}/readyz`)).status === 200, {
      timeoutMs: 20_000,
      what: "the daemon to be ready",
      intervalMs: 50,
    });
    await sleep(1000);
    await resetStats(admin);
    await sleep(windows.scanMs);
    const stats = await readCommandStats(admin);
    const t0 = performance.now();
    await httpGet(`${child.httpUrl}/metrics`);
    const scrapeMs = performance.now() - t0;
    const seconds = windows.scanMs / 1000;
    return {
      windowMs: windows.scanMs,
      xpendingCallsPerSecond: (stats.xpending?.calls ?? 0) / seconds,
      xpendingUsecPerCall: (stats.xpending?.usec ?? 0) / (stats.xpending?.calls ?? Number.NaN),
      redisUsecPerSecond: totals(stats).usec / seconds,
      scrapeMs,
      commands: topCommands(stats, seconds),
    };
  } finally {
    await child.stop();
  }
}

export async function observabilityScenario(options: BenchOptions): Promise<ScenarioResult> {
  const server = await startRedis();
  const admin = server.client();
  const runs: ScrapeRun[] = [];
  let large: LargeEntriesRun;
  let scan: ScanCost;
  let collector: DaemonScan;
  try {
    for (const groups of [1, 100, 1000]) {
      const run = await measureScrapes(options, admin, server.url, groups);
      runs.push(run);
      options.log(
        `  ${groups} groups: /metrics p50 ${fmt(run.latencyP50Ms)} ms, ` +
          `${fmt(run.redisUsecPerScrape)} µs Redis/scrape`,
      );
    }
    large = await measureLargeEntries(options, admin, server.url);
    options.log(
      `  50 MB entries: /metrics p50 ${fmt(large.latencyP50Ms)} ms, ` +
        `${fmt(large.redisBytesOutPerScrape)} bytes out of Redis per scrape`,
    );
    await admin.flushall();
    await seedStuckPel(admin, "scan", GROUP, SCAN_PEL);
    scan = await clientScan(admin, "scan");
    options.log(`  client PEL scan of ${scan.entries}: ${fmt(scan.wallMs)} ms`);
    collector = await daemonScan(options, admin, server.url);
  } finally {
    await server.stop();
  }
  const scrapeTable: Table = {
    title: "4. Observability: /metrics on a standby daemon (child process)",
    columns: [
      "groups",
      "scrapes",
      "latency p50 ms",
      "p95 ms",
      "max ms",
      "series",
      "body KB",
      "Redis µs/scrape",
      "Redis calls/scrape",
      "background Redis µs/s",
      "per scrape (calls × / µs)",
    ],
    rows: runs.map((run) => [
      run.groups,
      run.scrapes,
      fmt(run.latencyP50Ms, 2),
      fmt(run.latencyP95Ms, 2),
      fmt(run.latencyMaxMs, 2),
      run.series,
      fmt(run.bodyBytes / 1024, 1),
      run.redisUsecPerScrape,
      fmt(run.redisCallsPerScrape, 1),
      run.backgroundUsecPerSecond,
      run.perScrapeCommands || "-",
    ]),
    notes: [
      "Each group: its own stream of 10 entries, 5 pending. The lease is held by another holder, so the daemon never sweeps (every replica serves /metrics).",
      `Redis per scrape: commandstats delta over the scrapes minus the background rate measured over ${(options.quick ? WINDOWS.quick : WINDOWS.full).backgroundMs / 1000} s without scrapes.`,
    ],
  };
  const largeTable: Table = {
    title: "4. /metrics with 50 MB entries (one group, standby daemon)",
    columns: [
      "entry MB",
      "scrapes",
      "latency p50 ms",
      "max ms",
      "bytes out of Redis per scrape",
      "Redis µs/scrape",
    ],
    rows: [
      [
        large.entryMb,
        large.scrapes,
        fmt(large.latencyP50Ms, 2),
        fmt(large.latencyMaxMs, 2),
        fmt(large.redisBytesOutPerScrape, 0),
        fmt(large.redisUsecPerScrape, 0),
        `${large.sampled} of ${large.scrapes}`,
      ],
    ],
    notes: [
      "Entries of 50 MB at the stream's head, in the PEL, first undelivered and last. Bytes: INFO stats total_net_output_bytes over the scrapes (all clients; the INFO replies subtracted), divided by the scrapes.",
    ],
  };
  const scanTable: Table = {
    title: `4. PEL scan cost (${SCAN_PEL.toLocaleString("en-US")} pending entries)`,
    columns: ["what", "wall ms", "Redis µs", "calls", "per 100,000 entries"],
    rows: [
      [
        "client: XPENDING pages of 1,000 (exclusive start)",
        fmt(scan.wallMs, 0),
        scan.serverUsec,
        scan.pages,
        `${fmt((scan.wallMs * 100_000) / scan.entries, 0)} ms wall, ${fmt((scan.serverUsec * 100_000) / scan.entries / 1000, 1)} ms Redis`,
      ],
      [
        `daemon collector, pelScanIntervalMs 1000, over ${collector.windowMs / 1000} s`,
        `scrape ${fmt(collector.scrapeMs, 1)}`,
        `${fmt(collector.redisUsecPerSecond)} per s`,
        `${fmt(collector.xpendingCallsPerSecond, 1)} XPENDING/s`,
        collector.xpendingCallsPerSecond < 1
          ? "no PEL scan seen in the collector (not implemented yet?)"
          : `about ${fmt((collector.xpendingUsecPerCall * 100) / 1000, 1)} ms Redis (${fmt(collector.xpendingUsecPerCall)} µs per XPENDING call × 100 pages); ${collector.commands}`,
      ],
    ],
  };
  return {
    name: "observability",
    tables: [scrapeTable, largeTable, scanTable],
    targets: [],
    raw: { runs, large, scan, collector },
  };
}
