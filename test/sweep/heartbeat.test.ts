import { readFile } from "node:fs/promises";
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import { pendingEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";

const fixture = useRedisServer();
const MIN_IDLE_MS = 60_000;

/** The README's heartbeat, word for word (the test below checks the README still shows it). */
const HEARTBEAT_CALL = `redis.xclaim(stream, group, consumer, 0, id, "JUSTID")`;
async function heartbeat(
  redis: Redis,
  stream: string,
  group: string,
  consumer: string,
  id: string,
): Promise<unknown> {
  return redis.xclaim(stream, group, consumer, 0, id, "JUSTID");
}

/**
 * Stands in for the clock: the entry's last delivery (or heartbeat) `ms` ago, same owner, same
 * count. Only the test does this; consumers never do.
 */
async function elapse(stream: string, consumer: string, id: string, ms: number): Promise<void> {
  await fixture.redis.call(
    "XCLAIM",
    stream,
    "workers",
    consumer,
    0,
    id,
    "IDLE",
    ms,
    "RETRYCOUNT",
    1,
    "JUSTID",
  );
}

describe("the heartbeat pattern (README, Long work: heartbeats)", () => {
  it("is the snippet the README shows", async () => {
    const readme = await readFile(new URL("../../README.md", import.meta.url), "utf8");
    expect(readme).toContain(HEARTBEAT_CALL);
    expect(heartbeat.toString()).toContain(HEARTBEAT_CALL);
  });

  it("keeps an entry whose work outlives minIdleMs away from the janitor, delivery count unchanged", async () => {
    const stream = uniquePrefix("heartbeat");
    const group = "workers";
    const consumer = "worker-1";
    await fixture.redis.xgroup("CREATE", stream, group, "$", "MKSTREAM");
    const id = await fixture.redis.xadd(stream, "*", "job", "long");
    await fixture.redis.call("XREADGROUP", "GROUP", group, consumer, "STREAMS", stream, ">");
    const swept = groupConfig(stream, { minIdleMs: MIN_IDLE_MS });
    const context = sweepContext(fixture.redis);

    // Ten heartbeats, each after 0.9 x minIdleMs of work, with a sweep after each: the work has
    // run 9 x minIdleMs and the entry was never claimed.
    for (let beat = 0; beat < 10; beat += 1) {
      await elapse(stream, consumer, id ?? "", 0.9 * MIN_IDLE_MS);
      expect(await heartbeat(fixture.redis, stream, group, consumer, id ?? "")).toEqual([id]);
      const result = await sweepOnce(swept, context, neverAborted);
      expect(result).toMatchObject({ claimed: 0, examined: 1 });
    }
    // A late heartbeat still resets the entry in time for the next sweep.
    await elapse(stream, consumer, id ?? "", 5 * MIN_IDLE_MS);
    await heartbeat(fixture.redis, stream, group, consumer, id ?? "");
    expect((await sweepOnce(swept, context, neverAborted)).claimed).toBe(0);

    const [entry] = await pendingEntries(fixture.redis, stream, group);
    expect(entry).toMatchObject({ id, consumer, deliveries: 1 });
    expect(entry?.idleMs).toBeLessThan(MIN_IDLE_MS);

    // Without the heartbeat, the same entry is claimed (requeued) once it idles past minIdleMs.
    await elapse(stream, consumer, id ?? "", 1.5 * MIN_IDLE_MS);
    expect(await sweepOnce(swept, context, neverAborted)).toMatchObject({
      claimed: 1,
      requeued: 1,
    });
    // An empty heartbeat reply tells the worker the entry is no longer its own.
    expect(await heartbeat(fixture.redis, stream, group, consumer, id ?? "")).toEqual([]);
  });
});
