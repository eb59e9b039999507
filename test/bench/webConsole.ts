import { get } from "node:http";
import type { Redis } from "ioredis";
import { startRedis } from "../support/redisServer.js";
import { waitFor } from "../support/waitFor.js";
import { daemonConfig, httpGet, startDaemonChild, type DaemonChild } from "./daemonProcess.js";
import { LEASE_KEY } from "./janitorSweep.js";
import { readCommandStats, resetStats, type CommandStats } from "./redisStats.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { median, percentile, sum } from "./stats.js";
import { fmt, type Table, type TargetCheck } from "./table.js";

/**
 * Scenario u (`npm run bench -- --only=u`): what the web console (issue 25) costs. A standby
 * daemon (the lease is held elsewhere, so no sweep runs) with N discovered groups, each with a
 * few pending entries and a dead letter; its status board samples them all. Timed: GET /ui as a
 * browser asks for it (gzip accepted), the group page, and /metrics for comparison; counted:
 * the Redis commands each sends (INFO commandstats delta; for a page, a window in which a status
 * sampling round ran, seen by its XINFO GROUPS, which no page sends, is measured again).
 */
const GROUP = "workers";
const stream = (i: number): string => `tenant:${i}:events`;

async function createGroups(redis: Redis, count: number): Promise<void> {
  for (let start = 0; start < count; start += 500) {
    const pipeline = redis.pipeline();
    for (let i = start; i < Math.min(count, start + 500); i += 1) {
      pipeline.xgroup("CREATE", stream(i), GROUP, "$", "MKSTREAM");
      for (let n = 0; n < 10; n += 1)
        pipeline.xadd(stream(i), "*", "n", String(n), "body", "x".repeat(100));
      pipeline.xreadgroup("GROUP", GROUP, "worker-1", "COUNT", 5, "STREAMS", stream(i), ">");
      pipeline.xadd(
        `{${stream(i)}}:dead`,
        "*",
        ...["x-original-id", "1-1", "x-original-stream", stream(i), "x-original-group", GROUP],
        ...["x-delivery-count", "5", "x-dead-letter-reason", "max-deliveries"],
        ...["x-dead-lettered-at", String(Date.now()), "x-last-consumer", "worker-1", "n", "1"],
      );
    }
    await pipeline.exec();
  }
}

/** One GET with `Accept-Encoding: gzip`: time to the last byte, bytes on the wire. */
function getGzip(url: string): Promise<{ ms: number; bytes: number; status: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    // A fresh connection each time (as a browser's first visit): a kept-alive socket the server
    // closes while idle would fail the next request with "socket hang up".
    get(url, { headers: { "accept-encoding": "gzip" }, agent: false }, (response) => {
      let bytes = 0;
      response.on("data", (chunk: Buffer) => (bytes += chunk.length));
      response.on("end", () =>
        resolve({ ms: performance.now() - started, bytes, status: response.statusCode ?? 0 }),
      );
      response.on("error", reject);
    }).on("error", (error) => reject(new Error(`GET ${url}: ${error.message}`)));
  });
}

function calls(stats: CommandStats): number {
  return sum(Object.values(stats).map((s) => s.calls));
}

function commandList(stats: CommandStats, per: number): string {
  return (
    Object.entries(stats)
      .filter(([, stat]) => stat.calls / per >= 0.05)
      .sort(([, a], [, b]) => b.calls - a.calls)
      // A markdown cell: `xinfo|consumers` would split it.
      .map(([name, stat]) => `${name.replace("|", "\\|")} ${fmt(stat.calls / per)}`)
      .join(", ")
  );
}

interface Timed {
  what: string;
  p50Ms: number;
  p95Ms: number;
  gzipKb: number;
  rawKb: number;
}

async function timePage(url: string, what: string, runs: number): Promise<Timed> {
  await getGzip(url);
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < runs; i += 1) {
    const result = await getGzip(url);
    if (result.status !== 200) throw new Error(`${url} answered ${result.status}`);
    times.push(result.ms);
    bytes = result.bytes;
  }
  const raw = (await httpGet(url, 60_000)).body;
  return {
    what,
    p50Ms: median(times),
    p95Ms: percentile(times, 95),
    gzipKb: bytes / 1024,
    rawKb: Buffer.byteLength(raw) / 1024,
  };
}

interface Counted {
  what: string;
  /** Commands per request, background subtracted (script-internal commands included). */
  perRequest: number;
  commands: string;
}

/**
 * Commands per request. A page's window is measured again when a status sampling round fell in
 * it (XINFO GROUPS, which no page sends, says so); /metrics sends XINFO GROUPS itself, so the
 * background rate measured before is subtracted from its window instead.
 */
async function countCommands(
  admin: Redis,
  url: string,
  what: string,
  runs: number,
  backgroundPerMs: number,
): Promise<Counted> {
  const isPage = url.includes("/ui");
  for (let attempt = 1; ; attempt += 1) {
    await resetStats(admin);
    const started = performance.now();
    for (let i = 0; i < runs; i += 1) await getGzip(url);
    const elapsed = performance.now() - started;
    const stats = await readCommandStats(admin);
    const sampled = (stats["xinfo|groups"]?.calls ?? 0) > 0;
    if (isPage && sampled && attempt < 10) continue;
    const background = isPage ? 0 : backgroundPerMs * elapsed;
    return {
      what,
      perRequest: Math.max(0, calls(stats) - background) / runs,
      commands: commandList(stats, runs),
    };
  }
}

async function measure(
  options: BenchOptions,
  admin: Redis,
  url: string,
  count: number,
): Promise<{ timed: Timed[]; counted: Counted[] }> {
  await admin.flushall();
  await admin.set(LEASE_KEY, "other-host/1/held-by-the-bench", "PX", 3_600_000);
  await createGroups(admin, count);
  const child: DaemonChild = await startDaemonChild(options.cliPath, {
    ...daemonConfig(url, { metrics: { scrapeTimeoutMs: 60_000, pelScanIntervalMs: 3_600_000 } }),
    discover: [{ match: "tenant:*:events", minIdleMs: 60_000 }],
    discovery: { intervalMs: 3_600_000, maxGroups: 100_000 },
    status: { intervalMs: 10_000, window: 10 },
  });
  try {
    await waitFor(
      async () => {
        const report = JSON.parse((await httpGet(`${child.httpUrl}/status.json`, 60_000)).body) as {
          groups: unknown[];
        };
        return report.groups.length === count;
      },
      { timeoutMs: 300_000, intervalMs: 500, what: `${count} groups on the status board` },
    );
    const runs = options.quick ? 5 : 20;
    const base = child.httpUrl;
    const group = `${base}/ui/group?stream=${encodeURIComponent(stream(7))}&group=${GROUP}`;
    const timed = [
      await timePage(`${base}/ui?per=1000`, `/ui?per=1000 (${count} groups)`, runs),
      await timePage(`${base}/ui`, `/ui (page 1 of ${Math.ceil(count / 100)})`, runs),
      await timePage(
        `${base}/ui?sort=pending&dir=desc&q=1`,
        "/ui sorted by pending, filtered",
        runs,
      ),
      await timePage(group, "/ui/group (one group)", runs),
      await timePage(`${base}/metrics`, `/metrics (${count} groups)`, options.quick ? 2 : 5),
    ];
    // The background: the status sampler's rounds and anything else the standby does, counted
    // over whole sampling intervals, from the end of one round to the end of a later one (seen
    // as /status.json's generatedAt, Redis time, moving on): no guess at how long to wait.
    const roundAfter = (afterMs: number): Promise<number> =>
      waitFor(
        async () => {
          const { body } = await httpGet(`${child.httpUrl}/status.json`, 60_000);
          const { generatedAt } = JSON.parse(body) as { generatedAt: number };
          return generatedAt > afterMs ? generatedAt : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 50, what: "the next status round" },
      );
    const firstRound = await roundAfter(0);
    const startRound = await roundAfter(firstRound);
    await resetStats(admin);
    const endRound = await roundAfter(await roundAfter(startRound));
    const backgroundPerMs = calls(await readCommandStats(admin)) / (endRound - startRound);
    const counted = [
      await countCommands(admin, `${base}/ui`, "/ui (100 groups shown)", runs, backgroundPerMs),
      await countCommands(admin, group, "/ui/group (1 group shown)", runs, backgroundPerMs),
      await countCommands(admin, `${base}/ui/sweeper`, "/ui/sweeper", runs, backgroundPerMs),
      await countCommands(
        admin,
        `${base}/metrics`,
        `/metrics (${count} groups)`,
        3,
        backgroundPerMs,
      ),
    ];
    return { timed, counted };
  } catch (error) {
    options.log(`    daemon's last lines:\n${child.recentLines.slice(-5).join("\n")}`);
    throw error;
  } finally {
    await child.stop();
  }
}

export async function webConsoleScenario(options: BenchOptions): Promise<ScenarioResult> {
  const server = await startRedis();
  const admin = server.client();
  try {
    const sizes = options.quick ? [1_000] : [1_000, 10_000];
    const timed: Timed[] = [];
    const counted: Counted[] = [];
    for (const size of sizes) {
      options.log(`  web console, ${size} groups`);
      const run = await measure(options, admin, server.url, size);
      timed.push(...run.timed);
      counted.push(...run.counted);
    }
    const timeTable: Table = {
      title: "Web console: page latency and size (gzip accepted)",
      columns: ["page", "p50 ms", "p95 ms", "gzip KB", "raw KB"],
      rows: timed.map((t) => [t.what, fmt(t.p50Ms), fmt(t.p95Ms), fmt(t.gzipKb), fmt(t.rawKb)]),
    };
    const countTable: Table = {
      title: "Web console: Redis commands per request",
      columns: ["request", "commands", "by command (script-internal included)"],
      rows: counted.map((c) => [c.what, fmt(c.perRequest), c.commands]),
      notes: [
        "INFO commandstats delta over the requests, commands inside a script included. Pages: a window in which a status sampling round ran is measured again. /metrics: the background rate measured just before is subtracted.",
      ],
    };
    const overview1000 = timed.find((t) => t.what.startsWith("/ui?per=1000 (1000"));
    const overview10000 = timed.find((t) => t.what.startsWith("/ui (page 1 of 100)"));
    const targets: TargetCheck[] = [];
    if (overview1000 !== undefined) {
      targets.push(
        {
          scenario: "u /ui, 1,000 groups",
          target: "p50 < 150 ms",
          measured: `${fmt(overview1000.p50Ms)} ms`,
          met: overview1000.p50Ms < 150,
        },
        {
          scenario: "u /ui, 1,000 groups",
          target: "< 300 KB",
          measured: `${fmt(overview1000.gzipKb)} KB gzip (${fmt(overview1000.rawKb)} KB raw)`,
          met: overview1000.gzipKb < 300,
        },
      );
    }
    if (overview10000 !== undefined) {
      targets.push({
        scenario: "u /ui, 10,000 groups (paged)",
        target: "p50 < 500 ms",
        measured: `${fmt(overview10000.p50Ms)} ms`,
        met: overview10000.p50Ms < 500,
      });
    }
    return {
      name: "web console",
      tables: [timeTable, countTable],
      targets,
      raw: { timed, counted },
    };
  } finally {
    await server.stop();
  }
}
