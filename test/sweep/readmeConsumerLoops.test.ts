import { setTimeout as delay } from "node:timers/promises";
import type { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import type { GroupConfig } from "../../src/core/configTypes.js";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { commandCalls } from "../support/commandStats.js";
import { pendingEntries, streamEntries } from "../support/fabricatePel.js";
import {
  ConsumerFleet,
  readmeSnippet,
  writeProgram,
  type Program,
} from "../support/readmeSnippets.js";
import { pythonRedisProblem } from "../support/requireTools.js";
import { startRedis } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";
import { waitFor } from "../support/waitFor.js";

/**
 * The README's consumer loops, extracted from README.md and run as written (only `handle` is
 * defined before them), two consumers restarted whenever they exit, against a real janitor sweep
 * every SWEEP_EVERY_MS. 1 % of the entries are poison: `handle` throws for them.
 *
 * The test decides what is stuck, not the wall clock: the group's minIdleMs is far beyond the
 * test's length, and before each sweep the test ages (XCLAIM ... IDLE to the same owner, JUSTID:
 * no delivery counted) the pending entries the loop gives up on, the poison ones. A healthy
 * entry is never claimed however long the machine takes to handle it: with a real 500 ms
 * minIdleMs, a consumer busy past it had its batch requeued and handled twice (at-least-once, as
 * the README says of work that outlives minIdleMs), which the SLOW entry makes happen every run.
 */
const ENTRIES = 300;
const POISON = new Set([50, 150, 250]);
const SWEEP_EVERY_MS = 100;
/** The group's minIdleMs: no entry idles this long for real while a test runs. */
const CLAIM_AFTER_MS = 3_600_000;
const LANE = "{orders}:billing:retry";
const PROCESSED = "test:processed";
/** A healthy entry whose `handle` takes SLOW_MS, as on a machine too busy to run it sooner. */
const SLOW = 120;
const SLOW_MS = 1500;

/** `handle` for the JavaScript loops: records what it processed in a list, throws for poison. */
const JS_HANDLE = `import { Redis as Recorder } from "ioredis";
const recorder = new Recorder(process.env.REDIS_URL, { protocol: 2 });
async function handle(fields) {
  const n = fields[fields.indexOf("n") + 1];
  if (fields.includes("poison")) throw new Error("poison " + n);
  if (n === "${SLOW}") await new Promise((resolve) => setTimeout(resolve, ${SLOW_MS}));
  await recorder.rpush("${PROCESSED}", n);
}
`;
const PY_HANDLE = `import redis as recorder_module
import os as recorder_os
import time as recorder_time
recorder = recorder_module.Redis.from_url(recorder_os.environ["REDIS_URL"])
def handle(fields):
    if b"poison" in fields:
        raise ValueError("poison " + fields[b"n"].decode())
    if fields[b"n"] == b"${SLOW}":
        recorder_time.sleep(${SLOW_MS / 1000})
    recorder.rpush("${PROCESSED}", fields[b"n"])
`;

interface Outcome {
  healthy: string[];
  processed: string[];
  deadLetters: { n: string; deliveries: number; reason: string }[];
  readCalls: number;
  batches: number;
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function pendingCount(redis: Redis, stream: string): Promise<number> {
  if ((await redis.exists(stream)) === 0) return 0;
  const summary = (await redis.xpending(stream, "billing")) as [number];
  return summary[0];
}

/**
 * Makes the poison entries pending in `stream` idle CLAIM_AFTER_MS, as if that time had passed.
 * Only the poison ones: the loop leaves nothing else pending for good, so any other pending entry
 * is in a consumer's hands. A copy in the lane carries the original's fields, poison included.
 */
async function agePoisonEntries(redis: Redis, stream: string): Promise<void> {
  if ((await redis.exists(stream)) === 0) return;
  for (const entry of await pendingEntries(redis, stream, "billing", 1000)) {
    const [fields] = await redis.xrange(stream, entry.id, entry.id);
    if (!fields?.[1].includes("poison")) continue;
    await redis.call(
      "XCLAIM",
      stream,
      "billing",
      entry.consumer,
      0,
      entry.id,
      "IDLE",
      CLAIM_AFTER_MS,
      "JUSTID",
    );
  }
}

/** The janitor: a sweep every SWEEP_EVERY_MS (its sweep.intervalMs), at most 3,000. */
function startSweeps(redis: Redis, group: ResolvedGroup): () => Promise<void> {
  let sweeping = true;
  const context = sweepContext(redis);
  const sweeps = (async () => {
    for (let count = 0; sweeping && count < 3000; count += 1) {
      await agePoisonEntries(redis, "orders");
      await agePoisonEntries(redis, LANE);
      await sweepOnce(group, context, neverAborted);
      await delay(SWEEP_EVERY_MS);
    }
  })();
  return async () => {
    sweeping = false;
    await sweeps;
  };
}

/** Adds numbered entries to `orders`; those in POISON carry a `poison` field. */
class Producer {
  readonly healthy: string[] = [];
  produced = 0;
  batches = 0;
  constructor(private readonly redis: Redis) {}

  async add(count: number): Promise<void> {
    this.batches += 1;
    const pipeline = this.redis.pipeline();
    for (let i = 0; i < count; i += 1, this.produced += 1) {
      const poison = POISON.has(this.produced) ? ["poison", "1"] : [];
      if (poison.length === 0) this.healthy.push(String(this.produced));
      pipeline.xadd("orders", "*", "n", String(this.produced), ...poison);
    }
    await pipeline.exec();
  }
}

/** Runs the loop with the janitor until every entry is processed or dead-lettered. */
async function run(program: Program, settings: Partial<GroupConfig>): Promise<Outcome> {
  const server = await startRedis();
  cleanup.push(
    () => server.stop(),
    () => program.remove(),
  );
  const redis = server.client();
  await redis.xgroup("CREATE", "orders", "billing", "$", "MKSTREAM");
  const group = groupConfig("orders", { group: "billing", minIdleMs: CLAIM_AFTER_MS, ...settings });
  const fleet = new ConsumerFleet(program, { REDIS_URL: server.url }, 300);
  cleanup.push(() => fleet.stop());
  fleet.start("c1");
  fleet.start("c2");
  cleanup.push(startSweeps(server.client(), group));

  const producer = new Producer(redis);
  const deadLetters = async () => streamEntries(redis, group.deadLetterStream);
  // The producer's own pace: batches of 10, then a trickle of new work until every poison entry
  // is dead-lettered (new work keeps flowing meanwhile), bounded in count.
  while (producer.produced < ENTRIES) await producer.add(10).then(() => delay(50));
  while ((await deadLetters()).length < POISON.size && producer.produced < ENTRIES + 400) {
    await producer.add(1).then(() => delay(100));
  }
  await waitFor(
    async () => {
      const pending = (await pendingCount(redis, "orders")) + (await pendingCount(redis, LANE));
      const done = (await redis.llen(PROCESSED)) + (await deadLetters()).length;
      return pending === 0 && done >= producer.produced;
    },
    { timeoutMs: 30_000, what: "every entry processed or dead-lettered" },
  );
  await fleet.stop();
  return {
    healthy: producer.healthy,
    processed: await redis.lrange(PROCESSED, 0, -1),
    deadLetters: (await deadLetters()).map((letter) => ({
      n: letter.fields.get("n") ?? "",
      deliveries: Number(letter.fields.get("x-delivery-count")),
      reason: letter.fields.get("x-dead-letter-reason") ?? "",
    })),
    readCalls: (await commandCalls(redis, ["xreadgroup"])).xreadgroup ?? 0,
    batches: producer.batches,
  };
}

function expectPoisonOnly(outcome: Outcome, maxDeliveries: number): void {
  const poison = [...POISON].map(String);
  const healthyDeadLettered = outcome.deadLetters.filter((letter) => !poison.includes(letter.n));
  expect(healthyDeadLettered.length, "healthy entries dead-lettered").toBe(0);
  expect(outcome.deadLetters.map((letter) => letter.n).sort()).toEqual(poison.sort());
  for (const letter of outcome.deadLetters) {
    expect(letter.reason).toBe("max-deliveries");
    expect(letter.deliveries).toBeLessThanOrEqual(maxDeliveries + 1);
  }
  // Every healthy entry processed exactly once, and acknowledged (nothing is pending).
  expect([...outcome.processed].sort()).toEqual([...outcome.healthy].sort());
}

describe("the README's consumer loops with 1 % poison entries, against the janitor", () => {
  it("reassign (ioredis): healthy entries all processed, poison dead-lettered, no hot loop", async () => {
    const snippet = await readmeSnippet("js", "A consumer under `reassign` reads its own");
    const program = await writeProgram("consumer.mjs", JS_HANDLE + snippet, process.execPath);
    const outcome = await run(program, { action: "reassign", maxDeliveries: 5 });
    expectPoisonOnly(outcome, 5);
    // No hot loop: a few reads per batch of new work, not thousands of re-reads.
    expect(outcome.readCalls).toBeLessThan(6 * outcome.batches + 100);
  }, 90_000);

  it("retry lane (ioredis): 0 healthy entries dead-lettered, every poison entry is", async () => {
    const snippet = await readmeSnippet("js", "### Retry lanes");
    const program = await writeProgram("consumer.mjs", JS_HANDLE + snippet, process.execPath);
    const outcome = await run(program, { action: "requeue", retryLane: true, maxDeliveries: 3 });
    expectPoisonOnly(outcome, 3);
  }, 90_000);

  it("retry lane (redis-py, Debian's python3-redis): 0 healthy entries dead-lettered, every poison entry is", async () => {
    expect(await pythonRedisProblem()).toBeUndefined();
    const snippet = await readmeSnippet("python", "### Retry lanes");
    const program = await writeProgram("consumer.py", PY_HANDLE + snippet, "/usr/bin/python3");
    const outcome = await run(program, { action: "requeue", retryLane: true, maxDeliveries: 3 });
    expectPoisonOnly(outcome, 3);
  }, 90_000);
});
