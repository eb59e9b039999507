import type { Redis } from "ioredis";
import { startRedis } from "../support/redisServer.js";
import { BENCH_FENCE, benchGroup, janitorConnection, janitorSweep } from "./janitorSweep.js";
import { naiveSweep, type SweepPath } from "./naiveLoop.js";
import { referenceOptions, referenceSweep } from "./referenceScript.js";
import {
  readCommandStats,
  readRedisCpuSeconds,
  resetStats,
  serverTime,
  type ServerTime,
} from "./redisStats.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { copyStream, pendingCount, seedStuckPel } from "./seed.js";
import { median } from "./stats.js";
import { fmt, type Table, type TargetCheck } from "./table.js";

const TEMPLATE = "template";
const STREAM = "orders";
const GROUP = "billing";
const PATHS: readonly SweepPath[] = ["requeue", "dead-letter"];

type Approach = "janitor (defaults)" | "reference script" | "naive XAUTOCLAIM 1000 + pipeline";
const APPROACHES: readonly Approach[] = [
  "janitor (defaults)",
  "reference script",
  "naive XAUTOCLAIM 1000 + pipeline",
];

interface ThroughputRun {
  size: number;
  path: SweepPath;
  approach: Approach;
  rep: number;
  entries: number;
  seconds: number;
  entriesPerSecond: number;
  calls: number;
  /** Entries per call (the janitor's adaptive page; the reference uses the janitor's). */
  pageSize: number;
  longestCallMs?: number;
  server: ServerTime;
  serverUsecPerEntry: number;
  clientCpuUsecPerEntry: number;
  redisCpuUsecPerEntry: number;
}

async function runOnce(
  admin: Redis,
  url: string,
  size: number,
  path: SweepPath,
  approach: Approach,
  referencePageSize: number,
): Promise<Omit<ThroughputRun, "rep">> {
  const group = benchGroup(STREAM, GROUP, path);
  await copyStream(admin, TEMPLATE, STREAM, group.deadLetterStream);
  const janitor = approach === "janitor (defaults)" ? await janitorConnection(url) : undefined;
  await resetStats(admin);
  const redisCpuBefore = await readRedisCpuSeconds(admin);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let entries: number;
  let calls: number;
  let longestCallMs: number | undefined;
  if (janitor !== undefined) {
    const result = await janitorSweep(janitor, group);
    entries = result.claimed;
    calls = result.pages;
    longestCallMs = result.longestCallMs;
  } else if (approach === "reference script") {
    ({ entries, calls } = await referenceSweep(
      admin,
      referenceOptions(group, path, referencePageSize),
    ));
  } else {
    entries = await naiveSweep(admin, {
      stream: STREAM,
      group: GROUP,
      deadLetterStream: group.deadLetterStream,
      minIdleMs: group.minIdleMs,
      path,
      pageSize: 1000,
      deadLetterMaxLen: group.deadLetterMaxLen,
    });
    calls = Math.ceil(entries / 1000);
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const redisCpu = (await readRedisCpuSeconds(admin)) - redisCpuBefore;
  const server = serverTime(
    await readCommandStats(admin),
    approach !== "naive XAUTOCLAIM 1000 + pipeline",
  );
  janitor?.disconnect();
  const left = await pendingCount(admin, STREAM, GROUP);
  if (entries !== size || left !== 0) {
    throw new Error(`${approach} ${path} ${size}: moved ${entries}, ${left} still pending`);
  }
  return {
    size,
    path,
    approach,
    entries,
    seconds,
    entriesPerSecond: entries / seconds,
    calls,
    pageSize: entries / calls,
    ...(longestCallMs === undefined ? {} : { longestCallMs }),
    server,
    serverUsecPerEntry: server.totalUsec / entries,
    clientCpuUsecPerEntry: (cpu.user + cpu.system) / entries,
    redisCpuUsecPerEntry: (redisCpu * 1e6) / entries,
  };
}

function innerBreakdown(run: ThroughputRun): string {
  const { commands, scriptUsec, innerUsec } = run.server;
  const perEntry = (usec: number): string => fmt(usec / run.entries, 2);
  const parts = Object.entries(commands)
    .filter(([name]) => name !== "evalsha" && name !== "eval")
    .sort(([, a], [, b]) => b.usec - a.usec)
    .slice(0, 7)
    .map(([name, stat]) => `${name} ${perEntry(stat.usec)}`);
  if (scriptUsec > 0) parts.push(`Lua itself ${perEntry(scriptUsec - innerUsec)}`);
  return parts.join(", ");
}

export async function throughputScenario(options: BenchOptions): Promise<ScenarioResult> {
  const size = options.quick ? 20_000 : 200_000;
  const reps = options.quick ? 2 : 5;
  const server = await startRedis();
  const admin = server.client();
  const runs: ThroughputRun[] = [];
  try {
    await admin.set(BENCH_FENCE.key, BENCH_FENCE.value);
    // JIT warm-up of every client path, not recorded.
    await seedStuckPel(admin, TEMPLATE, GROUP, 10_000);
    for (const path of PATHS) {
      for (const approach of APPROACHES)
        await runOnce(admin, server.url, 10_000, path, approach, 250);
    }
    await admin.call("UNLINK", TEMPLATE);
    await seedStuckPel(admin, TEMPLATE, GROUP, size);
    for (const path of PATHS) {
      for (let rep = 0; rep < reps; rep += 1) {
        // Side by side: the reference runs with the page size the janitor settled on.
        let pageSize = 250;
        for (const approach of APPROACHES) {
          const run = await runOnce(admin, server.url, size, path, approach, pageSize);
          if (approach === "janitor (defaults)") pageSize = Math.round(run.pageSize);
          runs.push({ ...run, rep });
          options.log(
            `  ${size} ${path} ${approach}: ${fmt(run.entriesPerSecond)}/s, ${run.calls} calls ` +
              `(server ${fmt(run.serverUsecPerEntry, 2)} µs/entry)`,
          );
        }
      }
    }
  } finally {
    await server.stop();
  }

  const cell = (path: SweepPath, approach: Approach): ThroughputRun[] =>
    runs.filter((run) => run.path === path && run.approach === approach);
  const representative = (list: ThroughputRun[]): ThroughputRun | undefined => {
    const target = median(list.map((run) => run.entriesPerSecond));
    return list.find((run) => run.entriesPerSecond === target) ?? list[0];
  };
  const cells = PATHS.flatMap((path) =>
    APPROACHES.map((approach) => representative(cell(path, approach))).filter(
      (run): run is ThroughputRun => run !== undefined,
    ),
  );
  const throughputTable: Table = {
    title: `1. Sweep throughput, PEL ${size.toLocaleString("en-US")} idle entries (claimed and moved per second)`,
    columns: [
      "path",
      "approach",
      "entries/s",
      "wall s",
      "calls",
      "entries/call",
      "longest call ms (script's own)",
      "server µs/entry",
      "client CPU µs/entry",
      "Redis CPU µs/entry",
    ],
    rows: cells.map((run) => [
      run.path,
      run.approach,
      Math.round(run.entriesPerSecond),
      fmt(run.seconds, 2),
      run.calls,
      fmt(run.pageSize, 0),
      run.longestCallMs === undefined ? "-" : fmt(run.longestCallMs, 2),
      fmt(run.serverUsecPerEntry, 2),
      fmt(run.clientCpuUsecPerEntry, 2),
      fmt(run.redisCpuUsecPerEntry, 2),
    ]),
    notes: [
      "janitor (defaults): sweepOnce with batchSize 1000, maxScriptMs 2 (adaptive pages), the production sweepPage.lua, fenced.",
      "reference script: one XAUTOCLAIM + an XADD per entry (same fields and metadata fields as the janitor's copies) + one XACK per call (test/bench/referenceScript.ts), with the janitor's average page size of the same repetition; no checks, no fence, no PEL window.",
      `Repetitions: ${reps}; the row shows the repetition of median entries/s. server µs/entry: INFO commandstats, top-level commands (a script counts whole).`,
    ],
  };
  const ratioRows: (string | number)[][] = [];
  const targets: TargetCheck[] = [];
  for (const path of PATHS) {
    const janitor = cell(path, "janitor (defaults)");
    const paired = (other: Approach): number[] =>
      janitor.map((run) => {
        const partner = cell(path, other).find((candidate) => candidate.rep === run.rep);
        return run.entriesPerSecond / (partner?.entriesPerSecond ?? Number.NaN);
      });
    const vsReference = paired("reference script");
    const vsNaive = paired("naive XAUTOCLAIM 1000 + pipeline");
    ratioRows.push([
      path,
      fmt(median(vsReference), 2),
      `${fmt(Math.min(...vsReference), 2)}-${fmt(Math.max(...vsReference), 2)}`,
      fmt(median(vsNaive), 2),
      `${fmt(Math.min(...vsNaive), 2)}-${fmt(Math.max(...vsNaive), 2)}`,
    ]);
    targets.push(
      {
        scenario: `1 ${path} ${size.toLocaleString("en-US")} janitor (defaults)`,
        target: "janitor/reference script >= 0.9",
        measured: fmt(median(vsReference), 2),
        met: median(vsReference) >= 0.9,
      },
      {
        scenario: `1 ${path} ${size.toLocaleString("en-US")} janitor (defaults)`,
        target: "janitor/naive >= 3",
        measured: fmt(median(vsNaive), 2),
        met: median(vsNaive) >= 3,
      },
    );
  }
  const ratioTable: Table = {
    title: "1. Ratios (paired by repetition, same run)",
    columns: ["path", "janitor/reference (>= 0.9)", "range", "janitor/naive (>= 3)", "range"],
    rows: ratioRows,
  };
  const profileTable: Table = {
    title: "1. Where Redis spends the time (server µs per entry, by command)",
    columns: ["path", "approach", "server µs/entry", "breakdown (µs/entry)"],
    rows: cells.map((run) => [
      run.path,
      run.approach,
      fmt(run.serverUsecPerEntry, 2),
      innerBreakdown(run),
    ]),
    notes: [
      "For scripts the breakdown lists the commands called inside; 'Lua itself' = EVALSHA time minus those commands (interpreter, argument building, turning replies into Lua tables).",
    ],
  };
  return {
    name: "throughput",
    tables: [throughputTable, ratioTable, profileTable],
    targets,
    raw: { runs },
  };
}
