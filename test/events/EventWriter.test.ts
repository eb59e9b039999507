import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { EventWriter } from "../../src/events/EventWriter.js";
import { createEventMetrics } from "../../src/metrics/eventMetrics.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";

const fixture = useRedisServer();

async function counterValue(registry: Registry, name: string, type: string): Promise<number> {
  const family = await registry.getSingleMetric(name)?.get();
  return family?.values.find(({ labels }) => labels.type === type)?.value ?? 0;
}

function writerFor(streamKey: string, maxLen = 10000) {
  const registry = new Registry();
  const writer = new EventWriter({
    redis: registerScripts(fixture.redis),
    streamKey,
    maxLen,
    by: "host-a:42",
    metrics: createEventMetrics(registry),
  });
  return { registry, writer };
}

describe("EventWriter", () => {
  it("writes one entry with the contract's fields, at on the Redis clock, and counts it", async () => {
    const key = `${uniquePrefix("events")}:events`;
    const { registry, writer } = writerFor(key);
    const [seconds] = (await fixture.redis.call("TIME")) as [string, string];
    const ids = Array.from({ length: 25 }, (_, i) => `1-${i}`);
    writer.write({
      type: "requeued",
      stream: "orders",
      group: "billing",
      count: 25,
      ids,
      detail: { pages: 2 },
    });
    await writer.settled();
    const entries = (await fixture.redis.xrange(key, "-", "+")) as [string, string[]][];
    expect(entries).toHaveLength(1);
    const fields = entries[0]?.[1] ?? [];
    const record = Object.fromEntries(
      fields.flatMap((value, i) => (i % 2 === 0 ? [[value, fields[i + 1]]] : [])),
    ) as Record<string, string>;
    expect(Object.keys(record)).toEqual([
      "type",
      "at",
      "by",
      "stream",
      "group",
      "count",
      "ids",
      "detail",
    ]);
    expect(record.type).toBe("requeued");
    expect(Number(record.at)).toBeGreaterThanOrEqual(Number(seconds) * 1000);
    expect(Number(record.at)).toBeLessThan(Number(seconds) * 1000 + 60_000);
    expect(record.by).toBe("host-a:42");
    expect(record.stream).toBe("orders");
    expect(record.group).toBe("billing");
    expect(record.count).toBe("25");
    expect(record.ids?.split(" ")).toEqual(ids.slice(0, 20));
    expect(JSON.parse(record.detail ?? "")).toEqual({ pages: 2 });
    expect(await counterValue(registry, "stream_janitor_events_total", "requeued")).toBe(1);
  });

  it("keeps the stream near events.maxLen, and takes a given at as is", async () => {
    const key = `${uniquePrefix("events-cap")}:events`;
    const { writer } = writerFor(key, 10);
    for (let i = 0; i < 500; i += 1) writer.write({ type: "lease-acquired", at: 1234 });
    await writer.settled();
    expect(await fixture.redis.xlen(key)).toBeLessThan(500);
    const first = (await fixture.redis.xrange(key, "-", "+", "COUNT", 1))[0];
    const fields = first?.[1] ?? [];
    expect(fields.slice(0, 6)).toEqual(["type", "lease-acquired", "at", "1234", "by", "host-a:42"]);
    // Absent stream, group and ids are written empty; count 0; detail {}.
    expect(fields.slice(6)).toEqual([
      "stream",
      "",
      "group",
      "",
      "count",
      "0",
      "ids",
      "",
      "detail",
      "{}",
    ]);
  });

  it('writes nothing when events.stream is ""', async () => {
    const prefix = uniquePrefix("events-off");
    const before = await fixture.redis.dbsize();
    const { registry, writer } = writerFor("");
    expect(writer.enabled).toBe(false);
    writer.write({ type: "ghosts", stream: `${prefix}:s`, group: "g", count: 1 });
    await writer.settled();
    expect(await fixture.redis.dbsize()).toBe(before);
    expect(await counterValue(registry, "stream_janitor_events_total", "ghosts")).toBe(0);
  });

  it("counts a failed write as lost and throws nothing (the key holds a string: WRONGTYPE)", async () => {
    const key = `${uniquePrefix("events-wrong")}:events`;
    await fixture.redis.set(key, "not a stream");
    const { registry, writer } = writerFor(key);
    expect(() => writer.write({ type: "dead-lettered", count: 3 })).not.toThrow();
    await writer.settled();
    expect(await fixture.redis.get(key)).toBe("not a stream");
    expect(await counterValue(registry, "stream_janitor_events_lost_total", "dead-lettered")).toBe(
      1,
    );
    expect(await counterValue(registry, "stream_janitor_events_total", "dead-lettered")).toBe(0);
  });
});
