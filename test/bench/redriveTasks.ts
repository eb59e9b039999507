import type { Redis } from "ioredis";
import { pino } from "pino";
import { Registry } from "prom-client";
import { resolveGroup } from "../../src/core/resolveGroup.js";
import { defaultGroupConfig } from "../../src/config/defaultConfig.js";
import { RedriveTaskRunner } from "../../src/maintenance/RedriveTaskRunner.js";
import { createRedriveTaskMetrics } from "../../src/metrics/redriveTaskMetrics.js";
import { RateLimiter } from "../../src/operations/RateLimiter.js";
import { redriveDeadLetters } from "../../src/operations/redriveDeadLetters.js";
import { startRedriveTask } from "../../src/operations/redriveTasks.js";
import { registerScripts, type ScriptedRedis } from "../../src/scripts/scriptedRedis.js";
import { startRedis } from "../support/redisServer.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { PAYLOAD } from "./seed.js";
import { max, median, percentile } from "./stats.js";
import { fmt, type Table } from "./table.js";

const GROUP = "billing";
const LEASE = "bench:lease";
/** The Redis time one script call may take (README "Performance"). */
const BUDGET_US = 2000;

/** Dead letters in the janitor's layout (metadata, then ~170 bytes of fields), server-side. */
const DEAD_LETTERS_LUA = `
for i = 1, tonumber(ARGV[1]) do
  redis.call('XADD', KEYS[1], '*', 'x-original-id', '1000-' .. i, 'x-original-stream', ARGV[2],
    'x-original-group', ARGV[3], 'x-delivery-count', '5', 'x-dead-letter-reason', 'max-deliveries',
    'x-dead-lettered-at', '1', 'x-last-consumer', 'c', 'type', 'order.created', 'seq', tostring(i),
    'payload', ARGV[4])
end
return 1
`;

async function seed(redis: Redis, stream: string, count: number) {
  const group = resolveGroup(defaultGroupConfig(stream, GROUP));
  await redis.call("XGROUP", "CREATE", stream, GROUP, "$", "MKSTREAM");
  await redis.call(
    "EVAL",
    DEAD_LETTERS_LUA,
    1,
    group.deadLetterStream,
    count,
    stream,
    GROUP,
    PAYLOAD,
  );
  return group;
}

/** The durations (µs) of the EVALSHA calls in the slow log (threshold 0: every call). */
async function scriptCallsUs(redis: Redis): Promise<number[]> {
  const log = (await redis.call("SLOWLOG", "GET", "-1")) as [number, number, number, string[]][];
  return log.filter(([, , , args]) => args[0]?.toLowerCase() === "evalsha").map(([, , us]) => us);
}

async function runTask(redis: ScriptedRedis, raw: Redis, stream: string, count: number) {
  const group = await seed(raw, stream, count);
  const started = performance.now();
  const task = await startRedriveTask(redis, group, {
    leaseKey: LEASE,
    reason: undefined,
    limit: Number.POSITIVE_INFINITY,
    to: undefined,
    rate: 0,
    startedBy: "bench",
    keepMs: 60_000,
  });
  const startMs = performance.now() - started;
  await raw.call("SLOWLOG", "RESET");
  const fence = { key: LEASE, value: "bench" };
  const runner = new RedriveTaskRunner({
    redis,
    leaseKey: LEASE,
    budgetMs: BUDGET_US / 1000,
    currentTerm: () => ({ signal: new AbortController().signal, fence, fencingToken: 1 }),
    logger: pino({ level: "silent" }),
    metrics: createRedriveTaskMetrics(new Registry()),
    events: { write: () => undefined },
  });
  let rounds = 0;
  for (;;) {
    rounds += 1;
    const tasks = await runner.runOnce();
    if (tasks.find((t) => t.id === task.id)?.status !== "RUNNING") break;
  }
  const ms = performance.now() - started;
  const calls = await scriptCallsUs(raw);
  if ((await raw.xlen(stream)) !== count)
    throw new Error("the task did not move every dead letter");
  return { ms, startMs, rounds, calls };
}

/**
 * `npm run bench -- --only=t`: a redrive task (dlq redrive --async, run by the leader's runner in
 * batches of 500) against today's synchronous redrive, in-process on the same server, for 10,000
 * dead letters at an unlimited rate; and the Redis time of each batch script against the budget.
 */
export async function redriveTaskScenario(options: BenchOptions): Promise<ScenarioResult> {
  const server = await startRedis();
  const raw = server.client();
  const redis = registerScripts(server.client());
  const count = options.quick ? 2000 : 10_000;
  const rows: (string | number)[][] = [];
  const batchRows: (string | number)[][] = [];
  try {
    await raw.call("SET", LEASE, "bench");
    await raw.call("CONFIG", "SET", "slowlog-log-slower-than", "0", "slowlog-max-len", "100000");
    for (let run = 1; run <= 3; run += 1) {
      const group = await seed(raw, `sync:${run}`, count);
      const started = performance.now();
      const limiter = new RateLimiter({ ratePerSecond: 0 });
      const options_ = {
        limit: Number.POSITIVE_INFINITY,
        reason: undefined,
        dryRun: false,
        limiter,
      };
      const summary = await redriveDeadLetters(redis, group, options_);
      const syncMs = performance.now() - started;
      const task = await runTask(redis, raw, `task:${run}`, count);
      options.log(`run ${run}: sync ${fmt(syncMs)} ms, task ${fmt(task.ms)} ms`);
      rows.push([
        run,
        summary.redriven,
        fmt(count / (syncMs / 1000)),
        fmt(count / (task.ms / 1000)),
        fmt(task.startMs),
        task.rounds,
      ]);
      batchRows.push([
        run,
        task.calls.length,
        fmt(median(task.calls)),
        fmt(percentile(task.calls, 90)),
        fmt(max(task.calls)),
        task.calls.filter((us) => us > BUDGET_US).length,
        fmt(BUDGET_US),
      ]);
    }
  } finally {
    await server.stop();
  }
  const tables: Table[] = [
    {
      title: `Redrive task vs synchronous redrive: ${fmt(count)} dead letters of ~170 bytes, rate unlimited`,
      columns: [
        "run",
        "moved",
        "sync entries/s",
        "task entries/s",
        "task start ms",
        "runner rounds",
      ],
      rows,
      notes: [
        "in-process, one server: redriveDeadLetters() against startRedriveTask() + RedriveTaskRunner.runOnce() until COMPLETED (start, count and directory reads included)",
      ],
    },
    {
      title:
        "Redis time of the task's scripts (SLOWLOG, threshold 0: every EVALSHA while the runner ran)",
      columns: [
        "run",
        "script calls",
        "median µs",
        "p90 µs",
        "max µs",
        "calls over budget",
        "budget µs",
      ],
      rows: batchRows,
      notes: [
        "each batch one redriveTaskBatch.lua call, sized by the runner from the Redis time of the last ones (PageSizer: 64 first, at most 500, aiming at 80 % of 2 ms)",
      ],
    },
  ];
  return { name: "redrive tasks", tables, targets: [], raw: { rows, batchRows } };
}
