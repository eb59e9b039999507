import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Redis } from "ioredis";
import { readCommandStats, resetStats } from "./redisStats.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { PAYLOAD, seedStuckPel } from "./seed.js";
import { median, sum } from "./stats.js";
import { fmt, type Table } from "./table.js";
import { startRedis } from "../support/redisServer.js";

const execFileAsync = promisify(execFile);
const GROUP = "billing";

/** Dead letters in the janitor's layout (metadata, then the fields of a seeded entry), server-side. */
const DEAD_LETTERS_LUA = `
local count, offset = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 1, count do
  redis.call('XADD', KEYS[1], '*', 'x-original-id', '1000-' .. (offset + i),
    'x-original-stream', ARGV[3], 'x-original-group', ARGV[4], 'x-delivery-count', '5',
    'x-dead-letter-reason', 'max-deliveries', 'x-dead-lettered-at', '1',
    'x-last-consumer', 'crashed-consumer',
    'type', 'order.created', 'seq', tostring(offset + i), 'payload', ARGV[5])
end
return count
`;

async function seedDeadLetters(redis: Redis, stream: string, count: number): Promise<void> {
  for (let offset = 0; offset < count; offset += 10_000) {
    const n = Math.min(10_000, count - offset);
    await redis.call(
      "EVAL",
      DEAD_LETTERS_LUA,
      1,
      `{${stream}}:dead`,
      n,
      offset,
      stream,
      GROUP,
      PAYLOAD,
    );
  }
}

async function cli(options: BenchOptions, url: string, args: string[]) {
  const started = performance.now();
  const { stdout } = await execFileAsync(process.execPath, [options.cliPath, ...args], {
    env: { ...process.env, STREAM_JANITOR_REDIS_URL: url },
    maxBuffer: 64 * 1024 * 1024,
  });
  return { ms: performance.now() - started, stdout };
}

/** Commands the redrive script calls: already inside its EVALSHA time, so not counted again. */
const INSIDE_REDRIVE_SCRIPT = new Set(["type", "xrange", "xadd", "xdel", "time"]);

/** Redis server time of the last run (the bench issues nothing else meanwhile). */
async function serverUsec(
  redis: Redis,
  inside: ReadonlySet<string> = new Set(),
): Promise<{ usec: number; calls: number }> {
  const stats = Object.entries(await readCommandStats(redis))
    .filter(([name]) => !inside.has(name))
    .map(([, stat]) => stat);
  return { usec: sum(stats.map((s) => s.usec)), calls: sum(stats.map((s) => s.calls)) };
}

/**
 * `npm run bench -- --only=o`: what the operator commands cost. Redrive throughput at --rate 0
 * (the CLI end to end, process start included), and `inspect` on a 1,000-entry and a
 * 1,000,000-entry PEL (wall time of the CLI and Redis server time per run).
 */
export async function operatorScenario(options: BenchOptions): Promise<ScenarioResult> {
  const server = await startRedis();
  const redis = server.client();
  const tables: Table[] = [];
  const raw: Record<string, unknown> = {};
  try {
    // --- redrive ---------------------------------------------------------------------------
    const deadLetters = options.quick ? 20_000 : 100_000;
    const redriveRows: (string | number)[][] = [];
    for (let run = 0; run < 3; run += 1) {
      const stream = `redrive:${run}`;
      await redis.call("XGROUP", "CREATE", stream, GROUP, "$", "MKSTREAM");
      await seedDeadLetters(redis, stream, deadLetters);
      options.log(`redrive run ${run + 1}: ${deadLetters} dead letters`);
      await resetStats(redis);
      const args = [
        "dlq",
        "redrive",
        "--stream",
        stream,
        "--group",
        GROUP,
        "--rate",
        "0",
        "--json",
      ];
      const { ms, stdout } = await cli(options, server.url, args);
      const server_ = await serverUsec(redis, INSIDE_REDRIVE_SCRIPT);
      const summary = JSON.parse(stdout) as { redriven: number };
      redriveRows.push([
        run + 1,
        summary.redriven,
        fmt(ms / 1000, 2),
        fmt(summary.redriven / (ms / 1000)),
        fmt(server_.usec / summary.redriven, 2),
      ]);
      await redis.call("UNLINK", stream, `{${stream}}:dead`);
    }
    tables.push({
      title: `dlq redrive --rate 0: ${fmt(deadLetters)} dead letters of ~170 bytes`,
      columns: [
        "run",
        "redriven",
        "CLI wall s",
        "entries/s (CLI, start-up included)",
        "Redis µs/entry",
      ],
      rows: redriveRows,
      notes: [
        `command: stream-janitor dlq redrive --stream S --group ${GROUP} --rate 0 --json (3 scripted passes: count, move, count what remains)`,
      ],
    });
    raw.redrive = redriveRows;

    // --- inspect ----------------------------------------------------------------------------
    const sizes = options.quick ? [1000, 100_000] : [1000, 1_000_000];
    const inspectRows: (string | number)[][] = [];
    const dir = await mkdtemp(join(tmpdir(), "sj-bench-"));
    for (const size of sizes) {
      const stream = `inspect:${size}`;
      options.log(`inspect: seeding a PEL of ${size}`);
      await seedStuckPel(redis, stream, GROUP, size);
      const config = join(dir, `inspect-${size}.json`);
      await writeFile(config, JSON.stringify({ groups: [{ stream, group: GROUP }] }));
      const walls: number[] = [];
      const usecs: number[] = [];
      let calls = 0;
      for (let run = 0; run < 5; run += 1) {
        await resetStats(redis);
        const { ms, stdout } = await cli(options, server.url, [
          "inspect",
          "--json",
          "--config",
          config,
        ]);
        const report = JSON.parse(stdout) as { groups: { pending: number }[] };
        if (report.groups[0]?.pending !== size)
          throw new Error(`inspect saw ${report.groups[0]?.pending}`);
        walls.push(ms);
        const used = await serverUsec(redis);
        usecs.push(used.usec);
        calls = used.calls;
      }
      inspectRows.push([fmt(size), fmt(median(walls)), fmt(median(usecs)), calls]);
      await redis.call("UNLINK", stream);
    }
    tables.push({
      title: "inspect: cost by PEL size (one group, median of 5 runs)",
      columns: [
        "PEL entries",
        "CLI wall ms (start-up included)",
        "Redis server µs per run",
        "Redis commands per run",
      ],
      rows: inspectRows,
      notes: ["command: stream-janitor inspect --json --config FILE (one group configured)"],
    });
    raw.inspect = inspectRows;
  } finally {
    await server.stop();
  }
  return { name: "operator commands", tables, targets: [], raw };
}
