import type { Redis } from "ioredis";
import { startRedis } from "../support/redisServer.js";
import { BENCH_FENCE, benchGroup, janitorConnection, janitorSweep } from "./janitorSweep.js";
import { naiveSweep, type SweepPath } from "./naiveLoop.js";
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
const WARM_UP_SIZE = { full: 20_000, quick: 10_000 };

type Approach = "janitor b100" | "janitor b1000" | "naive XAUTOCLAIM 1000 + pipeline";
const APPROACHES: readonly Approach[] = [
  "janitor b100",
  "janitor b1000",
  "naive XAUTOCLAIM 1000 + pipeline",
];

export interface ThroughputRun {
  size: number;
  path: SweepPath;
  approach: Approach;
  rep: number;
  entries: number;
  seconds: number;
  entriesPerSecond: number;
  server: ServerTime;
  serverUsecPerEntry: number;
  /** Entries per second if only Redis' own time for these commands counted. */
  serverLimit: number;
  /** CPU of the bench process (the client side: ioredis, sweepOnce or the naive loop), µs/entry. */
  clientCpuUsecPerEntry: number;
  /** CPU of the whole redis-server process (commands plus protocol and socket work), µs/entry. */
  redisCpuUsecPerEntry: number;
  pages?: number;
}

async function runOnce(
  admin: Redis,
  url: string,
  size: number,
  path: SweepPath,
  approach: Approach,
): Promise<Omit<ThroughputRun, "rep">> {
  const group = benchGroup(STREAM, GROUP, path);
  await copyStream(admin, TEMPLATE, STREAM);
  await admin.call("UNLINK", group.deadLetterStream);
  const janitor = approach.startsWith("janitor") ? await janitorConnection(url) : undefined;
  await resetStats(admin);
  const redisCpuBefore = await readRedisCpuSeconds(admin);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let entries: number;
  let pages: number | undefined;
  if (janitor !== undefined) {
    const batch = approach === "janitor b100" ? 100 : 1000;
    const result = await janitorSweep(janitor, group, batch);
    entries = result.claimed;
    pages = result.pages;
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
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const redisCpu = (await readRedisCpuSeconds(admin)) - redisCpuBefore;
  const server = serverTime(await readCommandStats(admin), janitor !== undefined);
  janitor?.disconnect();
  const left = await pendingCount(admin, STREAM, GROUP);
  if (entries !== size || left !== 0) {
    throw new Error(`${approach} ${path} ${size}: moved ${entries}, ${left} still pending`);
  }
  const serverSeconds = server.totalUsec / 1e6;
  return {
    size,
    path,
    approach,
    entries,
    seconds,
    entriesPerSecond: entries / seconds,
    server,
    serverUsecPerEntry: server.totalUsec / entries,
    serverLimit: entries / serverSeconds,
    clientCpuUsecPerEntry: (cpu.user + cpu.system) / entries,
    redisCpuUsecPerEntry: (redisCpu * 1e6) / entries,
    ...(pages === undefined ? {} : { pages }),
  };
}

function rowsFor(runs: readonly ThroughputRun[]): ThroughputRun[] {
  // With repetitions, the run of median throughput represents the cell.
  const cells = new Map<string, ThroughputRun[]>();
  for (const run of runs) {
    const key = `${run.size}/${run.path}/${run.approach}`;
    cells.set(key, [...(cells.get(key) ?? []), run]);
  }
  return [...cells.values()].map((reps) => {
    const target = median(reps.map((run) => run.entriesPerSecond));
    return reps.find((run) => run.entriesPerSecond === target) ?? (reps[0] as ThroughputRun);
  });
}

function innerBreakdown(run: ThroughputRun): string {
  const { commands, scriptUsec, innerUsec } = run.server;
  const perEntry = (usec: number): string => fmt(usec / run.entries, 2);
  const parts = Object.entries(commands)
    .filter(([name]) => name !== "evalsha" && name !== "eval")
    .sort(([, a], [, b]) => b.usec - a.usec)
    .slice(0, 6)
    .map(([name, stat]) => `${name} ${perEntry(stat.usec)}`);
  if (scriptUsec > 0) parts.push(`Lua itself ${perEntry(scriptUsec - innerUsec)}`);
  return parts.join(", ");
}

/** Small PELs take a fraction of a second, so they are repeated to average out other load. */
function repetitions(size: number, quick: boolean): number {
  if (size <= 10_000) return quick ? 3 : 5;
  if (size <= 100_000) return quick ? 1 : 3;
  return 1;
}

export async function throughputScenario(options: BenchOptions): Promise<ScenarioResult> {
  const sizes = options.quick ? [10_000, 50_000] : [10_000, 100_000, 1_000_000];
  const server = await startRedis();
  const admin = server.client();
  const runs: ThroughputRun[] = [];
  const seeding: { size: number; seconds: number; copySeconds: number }[] = [];
  try {
    await admin.set(BENCH_FENCE.key, BENCH_FENCE.value);
    // JIT warm-up of both client paths (ioredis reply parsing, sweepOnce), not recorded.
    const warmUp = options.quick ? WARM_UP_SIZE.quick : WARM_UP_SIZE.full;
    await seedStuckPel(admin, TEMPLATE, GROUP, warmUp);
    for (let round = 0; round < (options.quick ? 1 : 2); round += 1) {
      for (const path of PATHS) {
        for (const approach of APPROACHES) {
          await runOnce(admin, server.url, warmUp, path, approach);
        }
      }
    }
    for (const size of sizes) {
      await admin.call("UNLINK", TEMPLATE);
      const seeded = await seedStuckPel(admin, TEMPLATE, GROUP, size);
      const copySeconds = await copyStream(admin, TEMPLATE, STREAM);
      seeding.push({ size, seconds: seeded.seconds, copySeconds });
      options.log(`  seeded ${size} stuck entries in ${fmt(seeded.seconds)} s`);
      const reps = repetitions(size, options.quick);
      for (const path of PATHS) {
        for (let rep = 0; rep < reps; rep += 1) {
          for (const approach of APPROACHES) {
            const run = await runOnce(admin, server.url, size, path, approach);
            runs.push({ ...run, rep });
            options.log(
              `  ${size} ${path} ${approach}: ${fmt(run.entriesPerSecond)}/s ` +
                `(server ${fmt(run.serverUsecPerEntry, 2)} µs/entry)`,
            );
          }
        }
      }
    }
  } finally {
    await server.stop();
  }

  const cells = rowsFor(runs);
  const throughputTable: Table = {
    title: "1. Sweep throughput (entries claimed and moved per second)",
    columns: [
      "PEL size",
      "path",
      "approach",
      "entries/s",
      "wall s",
      "server µs/entry",
      "server-time limit/s",
      "busy %",
      "client CPU µs/entry",
      "Redis CPU µs/entry",
    ],
    rows: cells.map((run) => [
      run.size.toLocaleString("en-US"),
      run.path,
      run.approach,
      Math.round(run.entriesPerSecond),
      fmt(run.seconds, 2),
      fmt(run.serverUsecPerEntry, 2),
      Math.round(run.serverLimit),
      fmt((100 * run.entriesPerSecond) / run.serverLimit, 0),
      fmt(run.clientCpuUsecPerEntry, 2),
      fmt(run.redisCpuUsecPerEntry, 2),
    ]),
    notes: [
      "server µs/entry: INFO commandstats delta, top-level commands only (EVALSHA counts whole; the commands a script calls are inside it).",
      "server-time limit = entries / server seconds; busy % = entries/s ÷ limit (share of wall time Redis spent executing the sweep's commands).",
      "client CPU: the bench process (ioredis + sweepOnce, or the naive loop); Redis CPU: the whole redis-server process (INFO cpu), which adds protocol parsing and socket work to the command time.",
      `Repetitions: ${sizes.map((size) => `${size.toLocaleString("en-US")}: ${repetitions(size, options.quick)}`).join(", ")}; the row shows the repetition of median entries/s. Seeding is not counted.`,
    ],
  };
  const curveTable: Table = {
    title: "1. Curve: entries/s against PEL size",
    columns: ["path", "approach", ...sizes.map((size) => size.toLocaleString("en-US"))],
    rows: PATHS.flatMap((path) =>
      APPROACHES.map((approach) => [
        path,
        approach,
        ...sizes.map((size) => {
          const cell = cells.find(
            (run) => run.size === size && run.path === path && run.approach === approach,
          );
          return cell === undefined ? "-" : Math.round(cell.entriesPerSecond);
        }),
      ]),
    ),
  };
  const ratioRows: (string | number)[][] = [];
  const targets: TargetCheck[] = [];
  const ratios: {
    size: number;
    path: SweepPath;
    approach: Approach;
    vsNaive: number;
    vsLimit: number;
  }[] = [];
  for (const size of sizes) {
    for (const path of PATHS) {
      const repsOf = (approach: Approach): ThroughputRun[] =>
        runs.filter((run) => run.size === size && run.path === path && run.approach === approach);
      const naive = repsOf("naive XAUTOCLAIM 1000 + pipeline");
      for (const approach of ["janitor b100", "janitor b1000"] as const) {
        const janitor = repsOf(approach);
        if (janitor.length === 0 || naive.length === 0) continue;
        // Paired: each repetition ran both back to back, under the same outside load.
        const perRep = janitor.map((run) => {
          const partner = naive.find((other) => other.rep === run.rep) ?? naive[0];
          return run.entriesPerSecond / (partner?.entriesPerSecond ?? Number.NaN);
        });
        const vsNaive = median(perRep);
        const vsLimit = median(janitor.map((run) => run.entriesPerSecond / run.serverLimit));
        ratios.push({ size, path, approach, vsNaive, vsLimit });
        ratioRows.push([
          size.toLocaleString("en-US"),
          path,
          approach,
          fmt(vsNaive, 2),
          perRep.length > 1 ? `${fmt(Math.min(...perRep), 2)}-${fmt(Math.max(...perRep), 2)}` : "-",
          fmt(vsLimit, 2),
        ]);
        targets.push(
          {
            scenario: `1 ${path} ${size.toLocaleString("en-US")} ${approach}`,
            target: "janitor/naive >= 2.5",
            measured: fmt(vsNaive, 2),
            met: vsNaive >= 2.5,
          },
          {
            scenario: `1 ${path} ${size.toLocaleString("en-US")} ${approach}`,
            target: "janitor/server-limit >= 0.6",
            measured: fmt(vsLimit, 2),
            met: vsLimit >= 0.6,
          },
        );
      }
    }
  }
  const ratioTable: Table = {
    title: "1. Ratios (same run)",
    columns: [
      "PEL size",
      "path",
      "janitor",
      "janitor/naive (>= 2.5)",
      "range over reps",
      "janitor/server-limit (>= 0.6)",
    ],
    rows: ratioRows,
    notes: [
      "janitor/naive: median over repetitions of the paired ratio (both ran back to back in each repetition).",
    ],
  };
  const profileTable: Table = {
    title: "1. Where Redis spends the time (server µs per entry, by command)",
    columns: ["PEL size", "path", "approach", "server µs/entry", "breakdown (µs/entry)"],
    rows: cells.map((run) => [
      run.size.toLocaleString("en-US"),
      run.path,
      run.approach,
      fmt(run.serverUsecPerEntry, 2),
      innerBreakdown(run),
    ]),
    notes: [
      "For the janitor the breakdown lists the commands called inside the script; 'Lua itself' = EVALSHA time minus those commands (interpreter, argument building, reply conversion).",
    ],
  };
  const seedTable: Table = {
    title: "1. Seeding (not counted)",
    columns: ["PEL size", "seed s", "COPY per run s"],
    rows: seeding.map((seed) => [
      seed.size.toLocaleString("en-US"),
      fmt(seed.seconds, 2),
      fmt(seed.copySeconds, 2),
    ]),
  };
  return {
    name: "throughput",
    tables: [throughputTable, curveTable, ratioTable, profileTable, seedTable],
    targets,
    raw: { runs, ratios, seeding },
  };
}
