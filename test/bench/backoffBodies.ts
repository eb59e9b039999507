/**
 * `npm run bench -- --only=b`: backoff with large entries (issue 30, item 2). The same PEL of
 * requeued copies waiting for a later tier (delivered twice in all, tier 2 one hour away), with
 * bodies of 1 KB and of 5 MB: the longest sweep call, Redis time, body reads (XRANGE inside the
 * script), and another client's PING meanwhile. Kept small for a shared 2-core machine.
 */
import type { Redis } from "ioredis";
import { startRedis } from "../support/redisServer.js";
import { BENCH_FENCE, benchGroup, janitorConnection, janitorSweep } from "./janitorSweep.js";
import { addStuckEntries } from "../support/fabricatePel.js";
import { commandCalls } from "../support/commandStats.js";
import { parseSlowlog, readCommandStats, resetStats } from "./redisStats.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { fmt, type Table, type TargetCheck } from "./table.js";

const GROUP = "billing";

interface Run {
  size: string;
  entries: number;
  sweeps: number;
  longestCallMs: number;
  slowCalls: number;
  redisMs: number;
  xrangeCalls: number;
  pingMaxMs: number;
}

/** Copies the janitor requeued, read again by a consumer and left idle 10 s: all waiting. */
async function seedWaitingCopies(
  admin: Redis,
  url: string,
  stream: string,
  body: Buffer,
  n: number,
) {
  const group = {
    ...benchGroup(stream, GROUP, "requeue"),
    minIdleMs: 1000,
    maxDeliveries: 100,
    backoffMs: [1000, 3_600_000],
  };
  await addStuckEntries(
    admin,
    stream,
    GROUP,
    Array.from({ length: n }, () => ["payload", body]),
  );
  const janitor = await janitorConnection(url);
  await janitorSweep(janitor, group);
  janitor.disconnect();
  const read = (await admin.call(
    "XREADGROUP",
    "GROUP",
    GROUP,
    "c1",
    "COUNT",
    n,
    "STREAMS",
    stream,
    ">",
  )) as [string, [string, unknown][]][];
  const copies = (read[0]?.[1] ?? []).map(([id]) => id);
  await admin.call(
    "XCLAIM",
    stream,
    GROUP,
    "c1",
    0,
    ...copies,
    "IDLE",
    10_000,
    "RETRYCOUNT",
    1,
    "JUSTID",
  );
  return group;
}

async function measure(
  url: string,
  admin: Redis,
  size: string,
  bytes: number,
  n: number,
  sweeps: number,
) {
  const stream = `waiting-${size.replace(/\s/gu, "")}`;
  const group = await seedWaitingCopies(admin, url, stream, Buffer.alloc(bytes, 120), n);
  const pinger = admin.duplicate();
  await admin.config("SET", "slowlog-log-slower-than", "0");
  await admin.config("SET", "slowlog-max-len", "10000");
  await admin.call("SLOWLOG", "RESET");
  await resetStats(admin);
  let pingMaxMs = 0;
  let sweeping = true;
  const pings = (async () => {
    while (sweeping) {
      const started = performance.now();
      await pinger.ping();
      pingMaxMs = Math.max(pingMaxMs, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  const janitor = await janitorConnection(url);
  for (let i = 0; i < sweeps; i += 1) {
    const result = await janitorSweep(janitor, group);
    if (result.claimed !== 0) throw new Error(`waiting copies claimed: ${result.claimed}`);
  }
  sweeping = false;
  await pings;
  janitor.disconnect();
  pinger.disconnect();
  const calls = parseSlowlog(await admin.call("SLOWLOG", "GET", 10000)).filter(
    (e) => e.command === "evalsha" || e.command === "eval",
  );
  const stats = await readCommandStats(admin);
  const run: Run = {
    size,
    entries: n,
    sweeps,
    longestCallMs: Math.max(0, ...calls.map((c) => c.durationUs)) / 1000,
    slowCalls: calls.filter((c) => c.durationUs > 20_000).length,
    redisMs: ((stats.evalsha?.usec ?? 0) + (stats.eval?.usec ?? 0)) / 1000,
    xrangeCalls: (await commandCalls(admin, ["xrange"])).xrange ?? 0,
    pingMaxMs,
  };
  await admin.del(stream);
  return run;
}

export async function backoffBodiesScenario(options: BenchOptions): Promise<ScenarioResult> {
  const n = options.quick ? 10 : 20;
  const sweeps = options.quick ? 5 : 10;
  const server = await startRedis();
  const admin = server.client();
  const runs: Run[] = [];
  try {
    await admin.set(BENCH_FENCE.key, BENCH_FENCE.value);
    for (const [size, bytes] of [
      ["1 KB", 1024],
      ["5 MB", 5 * 1024 * 1024],
    ] as const) {
      runs.push(await measure(server.url, admin, size, bytes, n, sweeps));
      options.log(`  ${size}: longest call ${fmt(runs.at(-1)?.longestCallMs ?? 0, 2)} ms`);
    }
  } finally {
    await server.stop();
  }
  const table: Table = {
    title: `10c. ${n} requeued copies waiting for their tier, ${sweeps} sweeps: 1 KB vs 5 MB bodies`,
    columns: [
      "body",
      "longest call ms",
      "calls > 20 ms",
      "Redis ms (scripts)",
      "XRANGE",
      "PING max ms",
    ],
    rows: runs.map((r) => [
      r.size,
      fmt(r.longestCallMs, 2),
      r.slowCalls,
      fmt(r.redisMs, 1),
      r.xrangeCalls,
      fmt(r.pingMaxMs, 1),
    ]),
    notes: [
      "Copies requeued by the janitor (backoffMs [1s, 1h]), read again and left idle 10 s: delivered twice in all, waiting for the 1 h tier.",
    ],
  };
  const targets: TargetCheck[] = runs.map((r) => ({
    scenario: `10c ${r.size}`,
    target: "no sweep call over 20 ms, no body read",
    measured: `${fmt(r.longestCallMs, 2)} ms, ${r.xrangeCalls} XRANGE`,
    met: r.slowCalls === 0 && r.xrangeCalls === 0,
  }));
  return { name: "backoff-bodies", tables: [table], targets, raw: runs };
}
