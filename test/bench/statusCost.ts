/**
 * `npm run bench -- --only=s`: what the group status costs (issue 24, "Cost"). With 1,000 groups:
 * Redis time of one status sample (INFO commandstats delta; must stay below 2 % of one core at
 * the default status.intervalMs), against the scrape's own read; the scrape's read latency while
 * the sampler runs flat out on the same connection or on its own (the choice startDaemon made);
 * and `/metrics` p50 of a standby daemon with sampling at the default interval, at 1 s, and
 * effectively off (one sample an hour).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";
import { pino } from "pino";
import { Registry } from "prom-client";
import { defaultConfig } from "../../src/config/defaultConfig.js";
import type { JanitorConfig } from "../../src/core/configTypes.js";
import { resolveGroup, type ResolvedGroup } from "../../src/core/resolveGroup.js";
import { createJanitorMetrics } from "../../src/metrics/janitorMetrics.js";
import { createStatusMetrics } from "../../src/metrics/statusMetrics.js";
import { createScrapeRefresher } from "../../src/scrape/createScrapeRefresher.js";
import { readGroupSnapshots } from "../../src/scrape/readGroupSnapshots.js";
import { StatusSampler } from "../../src/status/StatusSampler.js";
import { startRedis } from "../support/redisServer.js";
import { waitFor } from "../support/waitFor.js";
import { daemonConfig, httpGet, startDaemonChild } from "./daemonProcess.js";
import { LEASE_KEY } from "./janitorSweep.js";
import { readCommandStats, resetStats, serverTime } from "./redisStats.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { max, median, percentile } from "./stats.js";
import { fmt, type Table } from "./table.js";

const GROUPS = 1000;
/** The base of issues 24/25: readGroupStats.lua before the status read was added to it. */
const BASE_COMMIT = "5c3a1f2";
const LUA_PATH = "src/scripts/lua/readGroupStats.lua";
const GROUP = "billing";
const silent = pino({ level: "silent" });

/** Small streams, each with a group, a consumer and a few pending entries (as observability.ts). */
async function createGroups(redis: Redis, count: number): Promise<ResolvedGroup[]> {
  const pipeline = redis.pipeline();
  const groups: ResolvedGroup[] = [];
  for (let s = 0; s < count; s += 1) {
    const stream = `events:${s}`;
    pipeline.xgroup("CREATE", stream, GROUP, "$", "MKSTREAM");
    for (let i = 0; i < 10; i += 1) pipeline.xadd(stream, "*", "n", String(i));
    pipeline.xreadgroup("GROUP", GROUP, "worker-1", "COUNT", 5, "STREAMS", stream, ">");
    groups.push(
      resolveGroup({
        stream,
        group: GROUP,
        minIdleMs: 60_000,
        maxDeliveries: 5,
        action: "requeue",
        requeueStream: "",
        deadLetterStream: "",
        deadLetterMaxLen: 100_000,
      }),
    );
  }
  await pipeline.exec();
  return groups;
}

interface ReadCost {
  what: string;
  usecPerRead: number;
  callsPerRead: number;
  wallMsPerRead: number;
}

/** Redis µs (top-level commands; a script counts whole) and wall ms of `read`, averaged. */
async function measureRead(
  admin: Redis,
  what: string,
  rounds: number,
  scripted: boolean,
  read: () => Promise<unknown>,
): Promise<ReadCost> {
  await read();
  await resetStats(admin);
  const started = performance.now();
  for (let i = 0; i < rounds; i += 1) await read();
  const wallMs = performance.now() - started;
  const stats = await readCommandStats(admin);
  const time = serverTime(stats, scripted);
  const calls = Object.entries(stats)
    .filter(([name]) => (scripted ? name.startsWith("eval") : true))
    .reduce((total, [, stat]) => total + stat.calls, 0);
  return {
    what,
    usecPerRead: time.totalUsec / rounds,
    callsPerRead: calls / rounds,
    wallMsPerRead: wallMs / rounds,
  };
}

/**
 * Redis µs of a plain scrape's script calls (no 'c' flag), readGroupStats.lua of BASE_COMMIT
 * against the working tree's, on the same groups, interleaved: the scrape must cost what it did.
 */
async function pairedScrapeScript(
  redis: Redis,
  groups: readonly ResolvedGroup[],
  rounds: number,
): Promise<{ base: number[]; now: number[] }> {
  const root = new URL("../../../../../../", import.meta.url);
  const baseLua = execFileSync("git", ["show", `${BASE_COMMIT}:${LUA_PATH}`], {
    cwd: root,
    encoding: "utf8",
  });
  const nowLua = readFileSync(new URL(LUA_PATH, root), "utf8");
  const shas = {
    base: String(await redis.script("LOAD", baseLua)),
    now: String(await redis.script("LOAD", nowLua)),
  };
  const calls: (string | number)[][] = [];
  for (let start = 0; start < groups.length; start += 100) {
    const batch = groups.slice(start, start + 100);
    const keys = [...batch.map((g) => g.stream), ...batch.map((g) => g.deadLetterStream)];
    const argv = ["0", batch.length, ...batch.flatMap((g, i) => [i + 1, g.group, 0])];
    calls.push([keys.length, ...keys, ...argv]);
  }
  const usecOf = async (sha: string): Promise<number> => {
    await redis.config("RESETSTAT");
    for (let i = 0; i < 20; i += 1)
      for (const call of calls) await redis.evalsha(sha, ...(call as [number, ...string[]]));
    const info = await redis.info("commandstats");
    return Number(/cmdstat_evalsha:calls=\d+,usec=(\d+)/u.exec(info)?.[1] ?? 0) / 20;
  };
  const result = { base: [] as number[], now: [] as number[] };
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 === 0 ? (["base", "now"] as const) : (["now", "base"] as const);
    for (const which of order) result[which].push(await usecOf(shas[which]));
  }
  return result;
}

function config(): JanitorConfig {
  const defaults = defaultConfig();
  return { ...defaults, metrics: { ...defaults.metrics, pelScanIntervalMs: 3_600_000 } };
}

/** Latencies of the scrape's read (refresh()) while `background` runs flat out, if given. */
async function refreshLatencies(
  refresh: () => Promise<void>,
  rounds: number,
  background: (() => Promise<void>) | undefined,
): Promise<number[]> {
  let running = background !== undefined;
  const loop = (async () => {
    while (running && background !== undefined) await background();
  })();
  const latencies: number[] = [];
  try {
    for (let i = 0; i < rounds; i += 1) {
      const t0 = performance.now();
      await refresh();
      latencies.push(performance.now() - t0);
    }
  } finally {
    running = false;
    await loop;
  }
  return latencies;
}

function sampler(redis: Redis, groups: readonly ResolvedGroup[]): StatusSampler {
  return new StatusSampler({
    redis,
    groups,
    config: config(),
    metrics: createStatusMetrics(new Registry()),
    pelScans: new Map(),
    logger: silent,
    instance: "bench:1",
    isLeader: () => false,
    fencingToken: () => null,
    writeEvent: () => undefined,
  });
}

async function metricsP50(
  options: BenchOptions,
  url: string,
  groups: readonly ResolvedGroup[],
  intervalMs: number,
  scrapes: number,
): Promise<{ intervalMs: number; p50: number; p95: number; max: number }> {
  const child = await startDaemonChild(options.cliPath, {
    ...daemonConfig(url, {
      log: { level: "info" },
      groups: groups.map(({ stream }) => ({ stream, group: GROUP, minIdleMs: 60_000 })),
    }),
    status: { intervalMs },
  });
  try {
    await waitFor(async () => (await httpGet(`${child.httpUrl}/readyz`)).status === 200, {
      timeoutMs: 20_000,
      what: "the daemon to be ready",
      intervalMs: 50,
    });
    await waitFor(
      async () => (await httpGet(`${child.httpUrl}/status.json`)).body.includes('"status"'),
      { timeoutMs: 20_000, what: "a first status sample", intervalMs: 50 },
    );
    for (let i = 0; i < 3; i += 1) await httpGet(`${child.httpUrl}/metrics`);
    const latencies: number[] = [];
    for (let i = 0; i < scrapes; i += 1) {
      const t0 = performance.now();
      const response = await httpGet(`${child.httpUrl}/metrics`);
      latencies.push(performance.now() - t0);
      if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
    }
    return {
      intervalMs,
      p50: median(latencies),
      p95: percentile(latencies, 95),
      max: max(latencies),
    };
  } finally {
    await child.stop();
  }
}

export async function statusCostScenario(options: BenchOptions): Promise<ScenarioResult> {
  const server = await startRedis();
  const rounds = options.quick ? 10 : 30;
  try {
    const admin = server.client();
    const groups = await createGroups(admin, GROUPS);
    // A standby: the bench's daemons never sweep.
    await admin.set(LEASE_KEY, "other-host/1/held-by-the-bench", "PX", 3_600_000);
    const redis = server.client();
    const consumers = { janitorConsumer: defaultConfig().sweep.consumerName };
    options.log(`status cost: ${GROUPS} groups, ${rounds} reads each`);
    const reads: ReadCost[] = [
      await measureRead(admin, "scrape read (scripted, as today)", rounds, true, () =>
        readGroupSnapshots(redis, groups, { timeoutMs: 10_000, perConsumer: false }),
      ),
      await measureRead(admin, "status sample (scripted: one server, Sentinel)", rounds, true, () =>
        sampler(redis, groups).sampleOnce(),
      ),
      await measureRead(admin, "status read, pipelined (Cluster, no EVAL)", rounds, false, () =>
        readGroupSnapshots(redis, groups, {
          timeoutMs: 10_000,
          perConsumer: false,
          consumers,
          scripted: false,
        }),
      ),
    ];
    options.log(`status cost: a plain scrape's script, ${BASE_COMMIT} against now`);
    const paired = await pairedScrapeScript(admin, groups, options.quick ? 4 : 10);
    const intervalMs = defaultConfig().status.intervalMs;
    const shareOfCore = (usec: number): string => `${fmt((usec / (intervalMs * 1000)) * 100, 3)} %`;

    options.log("status cost: scrape read latency beside a sampler running flat out");
    const scrapeRedis = server.client();
    const refresher = createScrapeRefresher({
      redis: scrapeRedis,
      groups,
      metrics: createJanitorMetrics(new Registry(), "0.0.0-bench"),
      logger: silent,
      config: config(),
    });
    const refresh = (): Promise<void> => refresher.refresh();
    await refresh();
    const own = sampler(server.client(), groups);
    const shared = sampler(scrapeRedis, groups);
    const beside = [
      { what: "no status sampling", latencies: await refreshLatencies(refresh, rounds, undefined) },
      {
        what: "sampler on its own connection (startDaemon)",
        latencies: await refreshLatencies(refresh, rounds, () => own.sampleOnce()),
      },
      {
        what: "sampler on the scrape's connection",
        latencies: await refreshLatencies(refresh, rounds, () => shared.sampleOnce()),
      },
    ];

    options.log("status cost: /metrics of a standby daemon child");
    const scrapes = options.quick ? 8 : 20;
    const daemons = [
      await metricsP50(options, server.url, groups, 3_600_000, scrapes),
      await metricsP50(options, server.url, groups, intervalMs, scrapes),
      await metricsP50(options, server.url, groups, 1000, scrapes),
    ];

    const readTable: Table = {
      title: `s. Redis time of a status sample, ${GROUPS.toLocaleString("en-US")} groups`,
      columns: [
        "read",
        "Redis µs per read",
        "calls per read",
        "wall ms",
        `share of one core every ${intervalMs / 1000} s`,
      ],
      rows: reads.map((read) => [
        read.what,
        fmt(read.usecPerRead, 0),
        fmt(read.callsPerRead, 0),
        fmt(read.wallMsPerRead, 1),
        shareOfCore(read.usecPerRead),
      ]),
      notes: [
        "INFO commandstats usec over the reads (scripts count whole, their inner commands not twice), divided by the reads. Target: the status sample below 2 % of one core at the default status.intervalMs.",
      ],
    };
    const pairedTable: Table = {
      title: `s. A plain scrape's readGroupStats calls, ${BASE_COMMIT} against now (Redis µs per 1,000 groups)`,
      columns: ["script", "median", "min", "max", "now / base (medians)"],
      rows: (["base", "now"] as const).map((which) => [
        which === "base" ? `${BASE_COMMIT} (before the status)` : "working tree",
        fmt(median(paired[which]), 0),
        fmt(Math.min(...paired[which]), 0),
        fmt(max(paired[which]), 0),
        which === "now" ? fmt(median(paired.now) / median(paired.base), 3) : "",
      ]),
      notes: [
        "Interleaved rounds of 20 scrapes each, INFO commandstats evalsha usec; same ARGV (no 'c' flag).",
      ],
    };
    const besideTable: Table = {
      title:
        "s. Scrape read latency (refresh(), 1,000 groups) beside a sampler running back to back",
      columns: ["status sampling", "p50 ms", "p95 ms", "max ms"],
      rows: beside.map(({ what, latencies }) => [
        what,
        fmt(median(latencies), 1),
        fmt(percentile(latencies, 95), 1),
        fmt(max(latencies), 1),
      ]),
      notes: [
        "Worst case: the sampler never pauses (the daemon samples once per status.intervalMs).",
      ],
    };
    const daemonTable: Table = {
      title: "s. `/metrics` latency of a standby daemon, 1,000 groups",
      columns: ["status.intervalMs", "p50 ms", "p95 ms", "max ms"],
      rows: daemons.map((run) => [
        run.intervalMs === 3_600_000
          ? "3,600,000 (one sample: off)"
          : run.intervalMs.toLocaleString("en-US"),
        fmt(run.p50, 1),
        fmt(run.p95, 1),
        fmt(run.max, 1),
      ]),
      notes: [
        `${scrapes} scrapes back to back after 3 warm-up scrapes; the daemon holds no lease.`,
      ],
    };
    return {
      name: "status cost",
      tables: [readTable, pairedTable, besideTable, daemonTable],
      targets: [],
      raw: { reads, paired, beside, daemons },
    };
  } finally {
    await server.stop();
  }
}
