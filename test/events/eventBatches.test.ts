import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { EventWriter } from "../../src/events/EventWriter.js";
import { createEventMetrics } from "../../src/metrics/eventMetrics.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { commandCalls } from "../support/commandStats.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";

const fixture = useRedisServer();

async function counterTotal(registry: Registry, name: string): Promise<number> {
  const family = await registry.getSingleMetric(name)?.get();
  return (family?.values ?? []).reduce((sum, { value }) => sum + value, 0);
}

function writerFor(streamKey: string, maxWaiting?: number) {
  const registry = new Registry();
  // A connection of its own: the test's client stays free to pause and unpause the server.
  const redis = registerScripts(fixture.server.client());
  const writer = new EventWriter({
    redis,
    streamKey,
    maxLen: 1_000_000,
    by: "host-a:42",
    metrics: createEventMetrics(registry),
    ...(maxWaiting === undefined ? {} : { maxWaiting }),
  });
  return { registry, writer };
}

const ROUND_TRIPS = ["evalsha", "eval", "xadd", "time"] as const;

describe("EventWriter batches", () => {
  it("writes a burst of 20,000 events while Redis answers: none lost, at least 100 per round trip, TIME at most once per batch", async () => {
    const key = `${uniquePrefix("events-burst")}:events`;
    const { registry, writer } = writerFor(key);
    const before = await commandCalls(fixture.redis, ROUND_TRIPS);
    for (let i = 0; i < 20_000; i += 1) {
      writer.write({
        type: "requeued",
        stream: "orders",
        group: `g${i % 7}`,
        count: 1,
        ids: [`${i}-0`],
      });
    }
    await writer.settled();
    const after = await commandCalls(fixture.redis, ROUND_TRIPS);
    const calls = (name: (typeof ROUND_TRIPS)[number]) => (after[name] ?? 0) - (before[name] ?? 0);
    expect(await counterTotal(registry, "stream_janitor_events_lost_total")).toBe(0);
    expect(await counterTotal(registry, "stream_janitor_events_total")).toBe(20_000);
    expect(await fixture.redis.xlen(key)).toBe(20_000);
    const batches = calls("evalsha") + calls("eval");
    expect(batches).toBeGreaterThan(0);
    expect(batches).toBeLessThanOrEqual(200);
    expect(calls("time")).toBeLessThanOrEqual(batches);
    // In the order written: the first and the last entry.
    const [first] = await fixture.redis.xrange(key, "-", "+", "COUNT", 1);
    const [last] = await fixture.redis.xrevrange(key, "+", "-", "COUNT", 1);
    expect(first?.[1][13]).toBe("0-0");
    expect(last?.[1][13]).toBe("19999-0");
  });

  it("drops past maxWaiting only while Redis does not answer, and writes again once it does", async () => {
    const key = `${uniquePrefix("events-paused")}:events`;
    const { registry, writer } = writerFor(key, 100);
    await fixture.redis.call("CLIENT", "PAUSE", "60000", "WRITE");
    try {
      for (let i = 0; i < 150; i += 1) writer.write({ type: "ghosts", count: i });
      expect(await counterTotal(registry, "stream_janitor_events_lost_total")).toBe(50);
    } finally {
      await fixture.redis.call("CLIENT", "UNPAUSE");
    }
    await writer.settled();
    expect(await fixture.redis.xlen(key)).toBe(100);
    for (let i = 0; i < 100; i += 1) writer.write({ type: "ghosts", count: i });
    await writer.settled();
    expect(await fixture.redis.xlen(key)).toBe(200);
    expect(await counterTotal(registry, "stream_janitor_events_lost_total")).toBe(50);
    expect(await counterTotal(registry, "stream_janitor_events_total")).toBe(200);
  });
});
