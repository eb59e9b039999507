import type { Redis } from "ioredis";
import { waitFor } from "../support/waitFor.js";
import { startRedis } from "../support/redisServer.js";
import {
  cpuTimeMs,
  daemonConfig,
  answerText,
  httpGetRaw,
  memoryStatus,
  startDaemonChild,
  type DaemonChild,
} from "./daemonProcess.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { max, median } from "./stats.js";
import { fmt, type Table, type TargetCheck } from "./table.js";

const GROUP = "g";
/** Groups with stuck entries (idle for an hour), so the leader has real sweeps to do. */
const STUCK_STREAMS = 10;
const SCRAPE_EVERY_MS = 5_000;
const SCRAPE_LIMIT_MS = 1_000;
/**
 * Seconds of scraping per size: BENCH_LEADER_SECONDS overrides it (an hour by hand), as
 * BENCH_LEADER_GROUPS (e.g. "10000") does the sizes.
 */
const watchSeconds = (quick: boolean): number =>
  Number(process.env.BENCH_LEADER_SECONDS ?? (quick ? 60 : 180));

const streamOf = (i: number): string => `t:${i}:ev`;

/** `count` streams t:<i>:ev with group g; the first STUCK_STREAMS hold 5 entries stuck an hour. */
async function createStreams(redis: Redis, count: number): Promise<void> {
  const chunk = 500;
  for (let start = 0; start < count; start += chunk) {
    const pipeline = redis.pipeline();
    for (let i = start; i < Math.min(start + chunk, count); i += 1) {
      pipeline.xgroup("CREATE", streamOf(i), GROUP, "$", "MKSTREAM");
      pipeline.xadd(streamOf(i), "*", "n", "0");
    }
    await pipeline.exec();
  }
  for (let i = 0; i < STUCK_STREAMS; i += 1) {
    const stream = streamOf(i);
    for (let n = 0; n < 5; n += 1) await redis.xadd(stream, "*", "stuck", String(n));
    const read = (await redis.xreadgroup("GROUP", GROUP, "gone", "STREAMS", stream, ">")) as
      [string, [string, string[]][]][] | null;
    const ids = (read?.[0]?.[1] ?? []).map(([id]) => id);
    await redis.call("XCLAIM", stream, GROUP, "gone", 0, ...ids, "IDLE", 3_600_000, "JUSTID");
  }
}

interface Sample {
  second: number;
  rssMb: number;
  heapUsedMb: number;
  metricsMs: number;
  metricsDecodedMs: number;
  metricsMb: number;
  statusMs: number;
  statusMb: number;
  cpuMs: number;
}

interface LeaderRun {
  groups: number;
  /** Bytes of text per family in the largest /metrics body (which families make a leader's size). */
  familyBytes: Record<string, number>;
  survived: boolean;
  seconds: number;
  samples: Sample[];
  peakRssMb: number;
}

/** Bytes per family (histogram suffixes folded into their family), largest first. */
function familyBytes(body: string): Record<string, number> {
  const bytes = new Map<string, number>();
  for (const line of body.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const name = (/^[a-z_:]+/u.exec(line)?.[0] ?? "").replace(/_(bucket|sum|count)$/u, "");
    bytes.set(name, (bytes.get(name) ?? 0) + line.length + 1);
  }
  return Object.fromEntries([...bytes].sort((a, b) => b[1] - a[1]));
}

const heapUsedMb = (body: string): number =>
  Number(/^nodejs_heap_size_used_bytes (\S+)$/mu.exec(body)?.[1] ?? Number.NaN) / 2 ** 20;

/**
 * One GET: `ms` until its last byte arrived (the daemon's answer, what the target is on), and
 * `decodedMs` once the bench also inflated it and made it text (34 MB for 10,000 groups), as a
 * scraper must, on the same two cores. The GETs of a tick are all received before any is
 * inflated: the bench's own inflating would otherwise hold back the other answer's last byte.
 */
async function timedTogether(
  urls: readonly string[],
): Promise<{ ms: number; decodedMs: number; body: string }[]> {
  const started = performance.now();
  const answers = await Promise.all(urls.map((url) => httpGetRaw(url, 30_000)));
  return answers.map((answer) => {
    const decodeStarted = performance.now();
    const body = answerText(answer);
    const ms = answer.receivedAt - started;
    return { ms, decodedMs: ms + performance.now() - decodeStarted, body };
  });
}

/** Scrapes /metrics and /status.json together every SCRAPE_EVERY_MS, as Prometheus and a board would. */
async function watch(
  child: DaemonChild,
  seconds: number,
): Promise<{ samples: Sample[]; completed: boolean; largest: string }> {
  const samples: Sample[] = [];
  let largest = "";
  const started = performance.now();
  let dead = false;
  void child.exited.then(() => {
    dead = true;
  });
  while (!dead && performance.now() - started < seconds * 1000) {
    const tick = performance.now();
    const cpuBefore = await cpuTimeMs(child.pid).catch(() => Number.NaN);
    const both = await timedTogether([
      `${child.httpUrl}/metrics`,
      `${child.httpUrl}/status.json`,
    ]).catch(() => undefined);
    const [metrics, status] = both ?? [];
    if (metrics === undefined || status === undefined)
      return { samples, completed: false, largest };
    if (metrics.body.length > largest.length) largest = metrics.body;
    const memory = await memoryStatus(child.pid);
    samples.push({
      second: (tick - started) / 1000,
      rssMb: (memory?.rssKb ?? Number.NaN) / 1024,
      heapUsedMb: heapUsedMb(metrics.body),
      metricsMs: metrics.ms,
      metricsDecodedMs: metrics.decodedMs,
      metricsMb: Buffer.byteLength(metrics.body) / 1e6,
      statusMs: status.ms,
      statusMb: Buffer.byteLength(status.body) / 1e6,
      cpuMs: (await cpuTimeMs(child.pid).catch(() => Number.NaN)) - cpuBefore,
    });
    const rest = SCRAPE_EVERY_MS - (performance.now() - tick);
    if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
  }
  return { samples, completed: !dead, largest };
}

/** A flag that turns true once the child logs `text` (its stdout, however long the log grows). */
function logged(child: DaemonChild, text: string): () => boolean {
  let seen = false;
  let tail = "";
  child.process.stdout?.on("data", (chunk: Buffer) => {
    tail = tail.slice(-200) + chunk.toString();
    if (tail.includes(text)) seen = true;
  });
  return () => seen || child.recentLines.some((line) => line.includes(text));
}

async function measure(options: BenchOptions, url: string, admin: Redis, groups: number) {
  await admin.flushall();
  await createStreams(admin, groups);
  const child = await startDaemonChild(options.cliPath, {
    ...daemonConfig(url, {}),
    discover: [{ match: "t:*:ev" }],
  });
  const started = performance.now();
  const leader = logged(child, '"lease acquired"');
  const discovered = logged(child, '"discovered groups changed"');
  try {
    await waitFor(leader, { timeoutMs: 60_000, intervalMs: 200, what: "the lease" });
    await waitFor(discovered, {
      timeoutMs: 300_000,
      intervalMs: 200,
      what: `${groups} discovered groups`,
    });
    const { samples, completed, largest } = await watch(child, watchSeconds(options.quick));
    const survived =
      completed && child.process.exitCode === null && child.process.signalCode === null;
    const memory = await memoryStatus(child.pid);
    const run: LeaderRun = {
      groups,
      familyBytes: familyBytes(largest),
      survived,
      seconds: (performance.now() - started) / 1000,
      samples,
      peakRssMb: (memory?.hwmKb ?? Number.NaN) / 1024,
    };
    if (!survived) options.log(`    died:\n${child.recentLines.slice(-5).join("\n")}`);
    return run;
  } finally {
    await child.stop();
  }
}

function row(run: LeaderRun): (string | number)[] {
  const { samples } = run;
  const pick = (f: (s: Sample) => number): number[] => samples.map(f);
  return [
    run.groups.toLocaleString("en-US"),
    run.survived ? "yes" : `NO (after ${samples.length} scrapes)`,
    samples.length,
    fmt(max(pick((s) => s.rssMb))),
    fmt(run.peakRssMb),
    fmt(max(pick((s) => s.heapUsedMb))),
    `${fmt(median(pick((s) => s.metricsMs)))} / ${fmt(max(pick((s) => s.metricsMs)))}`,
    `${fmt(median(pick((s) => s.metricsDecodedMs)))} / ${fmt(max(pick((s) => s.metricsDecodedMs)))}`,
    fmt(max(pick((s) => s.metricsMb)), 1),
    `${fmt(median(pick((s) => s.statusMs)))} / ${fmt(max(pick((s) => s.statusMs)))}`,
    fmt(max(pick((s) => s.statusMb)), 1),
    fmt(median(pick((s) => s.cpuMs))),
  ];
}

/** Scenario l: the LEADER of 1,000 and 10,000 discovered groups under the image's heap cap. */
export async function leaderMemoryScenario(options: BenchOptions): Promise<ScenarioResult> {
  const server = await startRedis();
  const admin = server.client();
  const runs: LeaderRun[] = [];
  try {
    const sizes = (process.env.BENCH_LEADER_GROUPS ?? "1000,10000").split(",").map(Number);
    for (const groups of sizes) {
      options.log(`  leader of ${groups} discovered groups...`);
      const run = await measure(options, server.url, admin, groups);
      options.log(`    ${JSON.stringify(row(run))}`);
      runs.push(run);
      // Each scrape's time in order (the first ones pay for the first reads).
      console.log(
        `    /metrics ms to last byte, by scrape: ${run.samples.map((s) => Math.round(s.metricsMs)).join(" ")}`,
      );
    }
  } finally {
    await server.stop();
  }
  const seconds = watchSeconds(options.quick);
  const table: Table = {
    title: `l. The leader of N discovered groups (t:*:ev, ${STUCK_STREAMS} with stuck entries), image NODE_OPTIONS, /metrics and /status.json every ${SCRAPE_EVERY_MS / 1000} s for ${seconds} s`,
    columns: [
      "groups",
      "stayed up",
      "scrapes",
      "VmRSS MB (max)",
      "VmHWM MB",
      "heapUsed MB (max)",
      "/metrics ms to last byte (median / max)",
      "with the bench's inflate and decode",
      "/metrics MB text",
      "/status.json ms (median / max)",
      "/status.json MB",
      "daemon CPU ms per tick",
    ],
    rows: runs.map(row),
    notes: [
      "Default settings, discover t:*:ev; both GETs of a tick run concurrently (gzip offered to /metrics); RSS from /proc/<pid>/status after each tick, heapUsed from the daemon's own nodejs_heap_size_used_bytes.",
    ],
  };
  const targets: TargetCheck[] = runs.flatMap((run) => [
    {
      scenario: `l leader of ${run.groups.toLocaleString("en-US")} groups stays up`,
      target: `${seconds} s`,
      measured: run.survived ? "up" : "died",
      met: run.survived,
    },
    {
      scenario: `l /metrics of a leader of ${run.groups.toLocaleString("en-US")} groups`,
      target: `<= ${SCRAPE_LIMIT_MS} ms (max)`,
      measured: `${fmt(max(run.samples.map((s) => s.metricsMs)))} ms`,
      met: max(run.samples.map((s) => s.metricsMs)) <= SCRAPE_LIMIT_MS,
    },
  ]);
  return { name: "leader memory", tables: [table], targets, raw: runs };
}
