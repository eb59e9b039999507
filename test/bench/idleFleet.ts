/**
 * `npm run bench -- --only=f`: one sweep pass over 10,000 idle groups (issue 30, item 4), and with
 * 1 % of them due; then `sweep --json` as the issue measured it. See RESULTS.md, "Idle fleet".
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Redis } from "ioredis";
import { pino } from "pino";
import { Supervisor } from "../../src/daemon/Supervisor.js";
import type { LeaderTerm } from "../../src/lease/types.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { startRedis } from "../support/redisServer.js";
import { BENCH_FENCE, benchGroup, janitorConnection, LEASE_KEY } from "./janitorSweep.js";
import { readCommandStats, resetStats, type CommandStats } from "./redisStats.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { median } from "./stats.js";
import { fmt, type Table, type TargetCheck } from "./table.js";

const execFileAsync = promisify(execFile);
const GROUP = "workers";
const stream = (i: number): string => `t:${i}:ev`;

/** `count` streams with one group each, three entries delivered and acknowledged. */
async function seedIdleFleet(redis: Redis, count: number): Promise<void> {
  const chunk = 500;
  for (let start = 0; start < count; start += chunk) {
    const pipeline = redis.pipeline();
    for (let i = start; i < Math.min(start + chunk, count); i += 1) {
      pipeline.xgroup("CREATE", stream(i), GROUP, "$", "MKSTREAM");
      for (let n = 0; n < 3; n += 1) pipeline.xadd(stream(i), `0-${n + 1}`, "n", String(n));
      pipeline.xreadgroup("GROUP", GROUP, "worker-1", "STREAMS", stream(i), ">");
      pipeline.xack(stream(i), GROUP, "0-1", "0-2", "0-3");
    }
    await pipeline.exec();
  }
}

/** The copies the last pass requeued, read and acknowledged as a consumer would. */
async function drainCopies(redis: Redis, key: string): Promise<void> {
  const read = (await redis.call(
    "XREADGROUP",
    "GROUP",
    GROUP,
    "worker-1",
    "COUNT",
    1000,
    "STREAMS",
    key,
    ">",
  )) as [string, [string, string[]][]][] | null;
  const ids = (read?.[0]?.[1] ?? []).map(([id]) => id);
  if (ids.length > 0) await redis.xack(key, GROUP, ...ids);
}

interface Pass {
  kind: string;
  groups: number;
  wallMs: number;
  redisUsec: number;
  calls: Record<string, number>;
  requeued: number;
  cpuMs?: number; // the bench process's CPU time during a leader pass
}

function summarise(kind: string, groups: number, wallMs: number, stats: CommandStats): Pass {
  const calls = Object.fromEntries(Object.entries(stats).map(([name, stat]) => [name, stat.calls]));
  return { kind, groups, wallMs, redisUsec: topLevelUsec(stats), calls, requeued: 0 };
}

/** Commands a pass runs inside its scripts are counted in the script's time already. */
const INNER = new Set(["type", "time", "xautoclaim", "xadd", "xack", "hget", "xlen", "del"]);

function topLevelUsec(stats: CommandStats): number {
  const scripted = (stats.evalsha?.calls ?? 0) + (stats.eval?.calls ?? 0) > 0;
  let usec = 0;
  for (const [name, stat] of Object.entries(stats)) {
    if (!scripted || !INNER.has(name)) usec += stat.usec;
  }
  return usec;
}

async function leaderPass(
  admin: Redis,
  supervisor: Supervisor,
  term: LeaderTerm,
  kind: string,
  due: readonly number[],
): Promise<Pass> {
  for (const i of due) {
    await drainCopies(admin, stream(i));
    await addStuckEntries(admin, stream(i), GROUP, numberedBodies(10));
  }
  await resetStats(admin);
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const results = (await supervisor.supervise(term)) ?? [];
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const stats = await readCommandStats(admin);
  const failed = results.filter((result) => result.error !== undefined);
  if (failed.length > 0) throw new Error(`pass failed: ${JSON.stringify(failed[0])}`);
  const pass = summarise(kind, results.length, wallMs, stats);
  pass.cpuMs = (cpu.user + cpu.system) / 1000;
  pass.requeued = results.reduce((total, result) => total + result.requeued, 0);
  return pass;
}

async function cliPass(
  options: BenchOptions,
  admin: Redis,
  url: string,
  config: string,
  groups: number,
): Promise<Pass> {
  await resetStats(admin);
  const started = performance.now();
  const { stdout } = await execFileAsync(process.execPath, [options.cliPath, "sweep", "--json"], {
    env: { ...process.env, STREAM_JANITOR_CONFIG: config, STREAM_JANITOR_REDIS_URL: url },
    maxBuffer: 64 * 1024 * 1024,
  });
  const wallMs = performance.now() - started;
  const stats = await readCommandStats(admin);
  const summaries = (JSON.parse(stdout) as { groups: { complete?: boolean }[] }).groups;
  if (summaries.length !== groups) throw new Error(`sweep --json reported ${summaries.length}`);
  // Groups swept to the end (not interrupted, not failed): the table says how many.
  const swept = summaries.filter((summary) => summary.complete === true).length;
  const pass = summarise("sweep --json (idle)", swept, wallMs, stats);
  return pass;
}

const SHOWN = ["evalsha", "xinfo|groups", "xinfo|stream", "xpending", "hget", "get", "scan"];

export async function idleFleetScenario(options: BenchOptions): Promise<ScenarioResult> {
  const count = options.quick ? 2_000 : 10_000;
  const runs = options.quick ? 2 : 3;
  const server = await startRedis();
  const admin = server.client();
  const redis = await janitorConnection(server.url);
  const dir = await mkdtemp(join(tmpdir(), "sj-bench-idle-"));
  try {
    options.log(`  seeding ${count} idle groups`);
    await seedIdleFleet(admin, count);
    await admin.set(LEASE_KEY, BENCH_FENCE.value);
    const term: LeaderTerm = {
      signal: new AbortController().signal,
      fence: BENCH_FENCE,
      fencingToken: 1,
    };
    const groups = Array.from({ length: count }, (_, i) => benchGroup(stream(i), GROUP, "requeue"));
    const supervisor = new Supervisor({
      groups,
      redis,
      logger: pino({ level: "silent" }),
      intervalMs: 30_000,
      batchSize: 1000,
      maxScriptMs: 2,
      maxEntriesPerGroup: 100_000,
      consumerName: "stream-janitor",
      currentTerm: () => term,
    });
    const first = await leaderPass(admin, supervisor, term, "first pass (idle)", []);
    options.log(`    ${JSON.stringify(first)}`);
    const passes: Pass[] = [first];
    const due = Array.from({ length: count / 100 }, (_, i) => i * 100 + 7);
    for (let run = 0; run < runs; run += 1) {
      passes.push(await leaderPass(admin, supervisor, term, "leader pass, idle", []));
      passes.push(await leaderPass(admin, supervisor, term, "leader pass, 1 % due", due));
      options.log(`    ${JSON.stringify(passes.slice(-2))}`);
    }
    await admin.del(LEASE_KEY);
    const config = join(dir, "sweep.json");
    await writeFile(
      config,
      JSON.stringify({
        redis: { url: server.url },
        log: { level: "warn" },
        discover: [{ match: "t:*:ev", groups: "*" }],
        discovery: { maxGroups: count },
      }),
    );
    for (let run = 0; run < runs; run += 1) {
      passes.push(await cliPass(options, admin, server.url, config, count));
      options.log(`    ${JSON.stringify(passes.at(-1))}`);
    }
    return report(count, passes);
  } finally {
    redis.disconnect();
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

function report(count: number, passes: readonly Pass[]): ScenarioResult {
  const kinds = [...new Set(passes.map((pass) => pass.kind))];
  const rows = kinds.map((kind) => {
    const of = passes.filter((pass) => pass.kind === kind);
    const last = of.at(-1);
    return [
      kind,
      of.length,
      fmt(last?.groups ?? 0),
      fmt(median(of.map((pass) => pass.wallMs))),
      fmt(median(of.map((pass) => pass.cpuMs ?? Number.NaN))),
      fmt(median(of.map((pass) => pass.redisUsec)) / 1000),
      fmt(median(of.map((pass) => pass.redisUsec / count))),
      SHOWN.map((name) => `${name} ${fmt(last?.calls[name] ?? 0)}`).join(", "),
    ];
  });
  const table: Table = {
    title: `f. One sweep pass over ${count.toLocaleString("en-US")} groups (one requeue group per stream), nothing pending or 1 % with 10 stuck entries`,
    columns: [
      "pass",
      "runs",
      "groups complete (last run)",
      "wall ms (median)",
      "janitor CPU ms (median)",
      "Redis ms",
      "Redis µs per group",
      "calls (last run)",
    ],
    rows,
    notes: [
      "Leader pass: Supervisor.supervise in the bench process, the lease held; Redis time is the sum of top-level commands in INFO commandstats (a script's inner commands are inside its time).",
      "sweep --json: the one-shot command as a child process (node start-up, discovery scan and lease included).",
    ],
  };
  const idle = passes.filter((pass) => pass.kind === "leader pass, idle");
  const idleWall = median(idle.map((pass) => pass.wallMs));
  const idleUsec = median(idle.map((pass) => pass.redisUsec / count));
  const targets: TargetCheck[] = [
    {
      scenario: `f idle pass wall, ${count.toLocaleString("en-US")} groups`,
      target: "<= 1000 ms",
      measured: `${fmt(idleWall)} ms`,
      met: idleWall <= 1000,
    },
    {
      scenario: "f Redis time per idle group",
      target: "<= 10 µs",
      measured: `${fmt(idleUsec)} µs`,
      met: idleUsec <= 10,
    },
  ];
  return { name: "idle fleet", tables: [table], targets, raw: passes };
}
