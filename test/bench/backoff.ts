/**
 * `npm run bench -- --only=10`: backoff tiers (issue 23, item 1). A PEL full of entries waiting
 * for their tier costs what a sparse PEL of the same size costs (same calls, same windows), and
 * a PEL of entries all due (scenario 1's shape) is swept as fast with backoffMs as without.
 */
import type { Redis } from "ioredis";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { startRedis } from "../support/redisServer.js";
import { BENCH_FENCE, benchGroup, janitorConnection, janitorSweep } from "./janitorSweep.js";
import { readCommandStats, resetStats } from "./redisStats.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { copyStream, seedStuckPel } from "./seed.js";
import { seedSparse } from "./sparse.js";
import { median } from "./stats.js";
import { fmt, type Table, type TargetCheck } from "./table.js";

const GROUP = "billing";
const TIERS = [1000, 10_000, 60_000];

interface Run {
  shape: string;
  calls: number;
  windows: number;
  claimed: number;
  examined: number;
  wallMs: number;
  serverMs: number;
}

async function measure(admin: Redis, url: string, shape: string, group: ResolvedGroup) {
  const janitor = await janitorConnection(url);
  await resetStats(admin);
  const started = performance.now();
  const result = await janitorSweep(janitor, group);
  const wallMs = performance.now() - started;
  const stats = await readCommandStats(admin);
  janitor.disconnect();
  const run: Run = {
    shape,
    calls: result.pages,
    windows: result.windows,
    claimed: result.claimed,
    examined: result.examined,
    wallMs,
    serverMs: ((stats.evalsha?.usec ?? 0) + (stats.eval?.usec ?? 0)) / 1000,
  };
  return run;
}

export async function backoffScenario(options: BenchOptions): Promise<ScenarioResult> {
  const size = options.quick ? 20_000 : 100_000;
  const dueSize = options.quick ? 20_000 : 200_000;
  const reps = options.quick ? 2 : 3;
  const server = await startRedis();
  const admin = server.client();
  const waitingRuns: Run[] = [];
  const dueRuns: Run[] = [];
  try {
    await admin.set(BENCH_FENCE.key, BENCH_FENCE.value);
    // Sparse, today's cost: 1 % stuck for an hour, the rest fresh; no backoff.
    await seedSparse(admin, "sparse", size, 100);
    const sparseGroup = { ...benchGroup("sparse", GROUP, "requeue"), minIdleMs: 1_800_000 };
    waitingRuns.push(await measure(admin, server.url, "1 % idle, no backoff", sparseGroup));
    options.log(`  sparse ${size}: ${waitingRuns[0]?.calls} calls`);
    // Waiting: every entry idle an hour, past minIdleMs (1 min) but not past its tier (2 h).
    await seedStuckPel(admin, "waiting-template", GROUP, size);
    for (const jitter of [0, 0.2]) {
      await copyStream(admin, "waiting-template", "waiting");
      const group = {
        ...benchGroup("waiting", GROUP, "requeue"),
        backoffMs: [7_200_000],
        backoffJitter: jitter,
      };
      const run = await measure(admin, server.url, `all waiting, jitter ${jitter}`, group);
      if (run.claimed !== 0 || run.examined !== size) {
        throw new Error(`waiting: claimed ${run.claimed}, examined ${run.examined}`);
      }
      waitingRuns.push(run);
      options.log(`  waiting ${size}, jitter ${jitter}: ${run.calls} calls`);
    }
    await admin.call("DEL", "sparse", "waiting", "waiting-template");

    // All due (scenario 1's shape, requeue): with backoffMs and jitter, and without.
    await seedStuckPel(admin, "due-template", GROUP, dueSize);
    for (let rep = 0; rep < reps; rep += 1) {
      for (const withBackoff of [false, true]) {
        const plain = benchGroup("orders", GROUP, "requeue");
        await copyStream(admin, "due-template", "orders", plain.deadLetterStream);
        const group = withBackoff ? { ...plain, backoffMs: TIERS, backoffJitter: 0.2 } : plain;
        const shape = withBackoff ? "backoffMs [1s, 10s, 1m], jitter 0.2" : "no backoff";
        const run = await measure(admin, server.url, shape, group);
        if (run.claimed !== dueSize) throw new Error(`due: claimed ${run.claimed}`);
        dueRuns.push(run);
        options.log(`  due ${dueSize}, ${shape}: ${fmt(run.wallMs, 0)} ms`);
      }
    }
  } finally {
    await server.stop();
  }
  const perSecond = (shape: string) =>
    median(dueRuns.filter((r) => r.shape === shape).map((r) => dueSize / (r.wallMs / 1000)));
  const serverUsPerEntry = (shape: string) =>
    median(dueRuns.filter((r) => r.shape === shape).map((r) => (r.serverMs * 1000) / dueSize));
  const shapes = ["no backoff", "backoffMs [1s, 10s, 1m], jitter 0.2"];
  const tables: Table[] = [
    {
      title: `10a. ${size.toLocaleString("en-US")} pending: waiting for their tier vs a sparse PEL (one sweep, defaults)`,
      columns: [
        "PEL",
        "script calls",
        "XPENDING windows",
        "claimed",
        "wall ms",
        "Redis ms (scripts)",
      ],
      rows: waitingRuns.map((r) => [
        r.shape,
        r.calls,
        r.windows,
        r.claimed,
        fmt(r.wallMs, 0),
        fmt(r.serverMs, 0),
      ]),
      notes: [
        "Waiting: every entry idle 1 h with minIdleMs 1 min and backoffMs [2h]: past minIdleMs, not due. Sparse: 1 % of the entries idle 1 h (claimed), the rest fresh.",
      ],
    },
    {
      title: `10b. ${dueSize.toLocaleString("en-US")} pending, all due, requeue (scenario 1's shape), median of ${reps}`,
      columns: ["configuration", "entries/s", "Redis µs per entry"],
      rows: shapes.map((shape) => [
        shape,
        fmt(perSecond(shape), 0),
        fmt(serverUsPerEntry(shape), 2),
      ]),
    },
  ];
  const sparse = waitingRuns[0];
  const waiting = waitingRuns.slice(1);
  const ratio = perSecond(shapes[1] ?? "") / perSecond(shapes[0] ?? "");
  const serverRatio = serverUsPerEntry(shapes[1] ?? "") / serverUsPerEntry(shapes[0] ?? "");
  const targets: TargetCheck[] = [
    ...waiting.map((run) => ({
      scenario: `10a ${run.shape}`,
      target: `<= ${sparse?.calls ?? 0} script calls (sparse PEL)`,
      measured: String(run.calls),
      met: run.calls <= (sparse?.calls ?? 0),
    })),
    {
      scenario: "10b all due, with backoff",
      target: ">= 95 % of the throughput without",
      measured: `${fmt(ratio * 100, 1)} %`,
      met: ratio >= 0.95,
    },
    {
      // Wall times swing with the machine's load; Redis time per entry much less.
      scenario: "10b all due, with backoff (Redis time)",
      target: "<= 105 % of the Redis µs per entry without",
      measured: `${fmt(serverRatio * 100, 1)} %`,
      met: serverRatio <= 1.05,
    },
  ];
  return { name: "backoff", tables, targets, raw: { waitingRuns, dueRuns } };
}
