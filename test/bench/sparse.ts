import type { Redis } from "ioredis";
import { startRedis } from "../support/redisServer.js";
import { BENCH_FENCE, benchGroup, janitorConnection, janitorSweep } from "./janitorSweep.js";
import { readCommandStats, resetStats } from "./redisStats.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { fmt, type Table, type TargetCheck } from "./table.js";

const GROUP = "billing";

/**
 * A mostly fresh PEL, as production has it: `count` entries delivered to a live consumer just
 * now, every `every`-th of them stuck with a crashed consumer for an hour. 5,000 per call.
 */
const SPARSE_LUA = `
local stream, group = KEYS[1], ARGV[1]
local count, every, offset = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local ids = {}
for i = 1, count do ids[i] = redis.call('XADD', stream, '*', 'seq', tostring(offset + i)) end
redis.call('XREADGROUP', 'GROUP', group, 'live', 'COUNT', count, 'STREAMS', stream, '>')
local args = { 'XCLAIM', stream, group, 'crashed', 0 }
for i = 1, count do
  if (offset + i) % every == 0 then args[#args + 1] = ids[i] end
end
if #args > 5 then
  args[#args + 1] = 'IDLE'
  args[#args + 1] = 3600000
  args[#args + 1] = 'JUSTID'
  redis.call(unpack(args))
end
return #args - 5
`;

/** Every `every`-th entry of `size` stuck for an hour, the others fresh (also for backoff.ts). */
export async function seedSparse(redis: Redis, stream: string, size: number, every: number) {
  await redis.call("XGROUP", "CREATE", stream, GROUP, "$", "MKSTREAM");
  for (let offset = 0; offset < size; offset += 5000) {
    await redis.call(
      "EVAL",
      SPARSE_LUA,
      1,
      stream,
      GROUP,
      Math.min(5000, size - offset),
      every,
      offset,
    );
  }
}

interface SparseRun {
  size: number;
  idle: number;
  calls: number;
  windows: number;
  wallMs: number;
  serverMs: number;
  longestCallMs: number;
  claimed: number;
  examined: number;
}

export async function sparseScenario(options: BenchOptions): Promise<ScenarioResult> {
  const shapes = options.quick
    ? [
        { size: 20_000, every: 100 },
        { size: 200_000, every: 1000 },
      ]
    : [
        { size: 20_000, every: 100 },
        { size: 1_000_000, every: 1000 },
      ];
  const server = await startRedis();
  const admin = server.client();
  const runs: SparseRun[] = [];
  try {
    await admin.set(BENCH_FENCE.key, BENCH_FENCE.value);
    for (const { size, every } of shapes) {
      const stream = `sparse-${size}`;
      await seedSparse(admin, stream, size, every);
      const janitor = await janitorConnection(server.url);
      await resetStats(admin);
      const started = performance.now();
      // Seeding a large PEL takes minutes on a busy machine: the fresh entries must stay fresh.
      const group = { ...benchGroup(stream, GROUP, "requeue"), minIdleMs: 1_800_000 };
      const result = await janitorSweep(janitor, group);
      const wallMs = performance.now() - started;
      const stats = await readCommandStats(admin);
      janitor.disconnect();
      const serverUsec = (stats.evalsha?.usec ?? 0) + (stats.eval?.usec ?? 0);
      if (result.claimed !== size / every || result.examined !== size) {
        throw new Error(`sparse ${size}: claimed ${result.claimed}, examined ${result.examined}`);
      }
      runs.push({
        size,
        idle: size / every,
        calls: result.pages,
        windows: result.windows,
        wallMs,
        serverMs: serverUsec / 1000,
        longestCallMs: result.longestCallMs,
        claimed: result.claimed,
        examined: result.examined,
      });
      options.log(
        `  sparse ${size}, ${size / every} idle: ${result.pages} calls, ${fmt(wallMs)} ms`,
      );
      await admin.call("UNLINK", stream);
    }
  } finally {
    await server.stop();
  }
  const table: Table = {
    title: "6. Sparse PEL: one sweep at defaults (batchSize 1000, maxScriptMs 2)",
    columns: [
      "pending",
      "idle (spread evenly)",
      "script calls",
      "XPENDING windows",
      "wall ms",
      "Redis ms (scripts)",
      "longest call ms (script's own)",
    ],
    rows: runs.map((run) => [
      run.size.toLocaleString("en-US"),
      run.idle.toLocaleString("en-US"),
      run.calls,
      run.windows,
      fmt(run.wallMs, 0),
      fmt(run.serverMs, 0),
      fmt(run.longestCallMs, 2),
    ]),
    notes: [
      "Every entry is pending; the idle ones belong to a crashed consumer (idle 1 h), the others to a live one (idle ~0). Each call reads PEL windows (XPENDING) until its 2 ms budget is spent and claims the idle entries of each window with XAUTOCLAIM.",
    ],
  };
  const targets: TargetCheck[] = runs
    .filter((run) => run.size === 20_000)
    .map((run) => ({
      scenario: "6 sparse 20,000 pending, 200 idle",
      target: "<= 25 script calls",
      measured: String(run.calls),
      met: run.calls <= 25,
    }));
  return { name: "sparse", tables: [table], targets, raw: { runs } };
}
