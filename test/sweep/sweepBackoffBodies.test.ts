import { describe, expect, it } from "vitest";
import type { Redis } from "ioredis";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import { addStuckEntries, pendingEntries } from "../support/fabricatePel.js";
import { commandCalls } from "../support/commandStats.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";

const fixture = useRedisServer();

/** Gives every pending entry of `ids` this idle time and count, without a delivery. */
async function backdate(redis: Redis, stream: string, ids: readonly string[], idleMs: number) {
  await redis.call(
    "XCLAIM",
    stream,
    "workers",
    "c1",
    0,
    ...ids,
    "IDLE",
    idleMs,
    "RETRYCOUNT",
    1,
    "JUSTID",
  );
}

/** Commands slower than `thresholdUs` from now on (SLOWLOG), and fresh command counts. */
async function resetServerStats(redis: Redis, thresholdUs: number): Promise<void> {
  await redis.config("SET", "slowlog-log-slower-than", String(thresholdUs));
  await redis.call("SLOWLOG", "RESET");
  await redis.call("CONFIG", "RESETSTAT");
}

async function slowCalls(redis: Redis): Promise<string[]> {
  const entries = (await redis.call("SLOWLOG", "GET", 100)) as [number, number, number, string[]][];
  return entries.map(([, , us, args]) => `${args[0]} ${us} us`);
}

describe("backoff without reading bodies", () => {
  it("judges waiting copies of 5 MB the janitor requeued without reading them: no XRANGE, no call over 20 ms", async () => {
    const stream = uniquePrefix("backoff-big");
    const big = Buffer.alloc(5 * 1024 * 1024, 120);
    const originals = await addStuckEntries(
      fixture.redis,
      stream,
      "workers",
      Array.from({ length: 6 }, () => ["payload", big]),
    );
    // Delivered once, due after 1 s; delivered twice in all (a copy of a once-delivered entry,
    // delivered once itself), due after an hour.
    const group = groupConfig(stream, {
      minIdleMs: 1000,
      maxDeliveries: 100,
      backoffMs: [1000, 3_600_000],
    });
    const context = sweepContext(fixture.redis);
    const requeue = await sweepOnce(group, context, neverAborted);
    expect(requeue.requeued).toBe(originals.length);
    // A consumer takes the copies and fails: they idle 10 s, past minIdleMs, far from their tier.
    const read = (await fixture.redis.call(
      "XREADGROUP",
      "GROUP",
      "workers",
      "c1",
      "COUNT",
      100,
      "STREAMS",
      stream,
      ">",
    )) as [string, [string, unknown][]][];
    const copies = (read[0]?.[1] ?? []).map(([id]) => id);
    expect(copies).toHaveLength(originals.length);
    await backdate(fixture.redis, stream, copies, 10_000);
    await resetServerStats(fixture.redis, 20_000);

    for (let pass = 0; pass < 3; pass += 1) {
      const result = await sweepOnce(group, context, neverAborted);
      expect(result.error).toBeUndefined();
      expect(result.claimed).toBe(0);
    }

    expect(await commandCalls(fixture.redis, ["xrange"])).toEqual({ xrange: 0 });
    expect(await slowCalls(fixture.redis)).toEqual([]);
    const pending = await pendingEntries(fixture.redis, stream, "workers");
    expect(pending.map((e) => [e.id, e.deliveries])).toEqual(copies.map((id) => [id, 1]));
  }, 60_000);

  it("reads a copy written before the janitor kept counts once, then judges it from what it recorded", async () => {
    const stream = uniquePrefix("backoff-legacy");
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      ids.push(
        String(await fixture.redis.xadd(stream, "*", "k", `v${i}`, "x-delivery-count", "2")),
      );
    }
    await fixture.redis.xgroup("CREATE", stream, "workers", "0");
    await fixture.redis.xreadgroup("GROUP", "workers", "c1", "STREAMS", stream, ">");
    await backdate(fixture.redis, stream, ids, 15_000);
    // 3 deliveries in all: due after a minute.
    const group = groupConfig(stream, {
      minIdleMs: 500,
      maxDeliveries: 100,
      backoffMs: [1000, 10_000, 60_000],
    });
    const context = sweepContext(fixture.redis);
    await resetServerStats(fixture.redis, 20_000);

    for (let pass = 0; pass < 3; pass += 1) {
      const result = await sweepOnce(group, context, neverAborted);
      expect(result.claimed).toBe(0);
    }

    expect(await commandCalls(fixture.redis, ["xrange"])).toEqual({ xrange: ids.length });
  });
});
