import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import {
  addStuckEntries,
  numberedBodies,
  pendingEntries,
  streamEntries,
} from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import {
  captureLogger,
  groupConfig,
  JANITOR_CONSUMER,
  neverAborted,
  sweepContext,
} from "../support/sweepHarness.js";

const fixture = useRedisServer();
const MAX_ID = "18446744073709551615-18446744073709551615";

async function pelState(stream: string): Promise<(string | number)[][]> {
  return (await pendingEntries(fixture.redis, stream, "workers")).map((e) => [
    e.id,
    e.consumer,
    e.deliveries,
  ]);
}

/** Entries with the given ids, pending for `crashed` and idle for an hour. */
async function addStuckWithIds(redis: Redis, stream: string, ids: readonly string[]) {
  for (const id of ids) await redis.xadd(stream, id, "at", id);
  await redis.xgroup("CREATE", stream, "workers", "0");
  await redis.call("XREADGROUP", "GROUP", "workers", "crashed", "STREAMS", stream, ">");
  await redis.call("XCLAIM", stream, "workers", "crashed", 0, ...ids, "IDLE", 3_600_000, "JUSTID");
}

describe("a page that cannot be written whole is not written at all", () => {
  it("refuses the page when the dead-letter stream has used up its ids: no copy, entries untouched, three sweeps in a row", async () => {
    const stream = uniquePrefix("exhausted");
    // Interleaved: due for requeue (1 delivery) and for dead-lettering (5 of 5).
    for (let i = 0; i < 5; i += 1) {
      await addStuckEntries(fixture.redis, stream, "workers", [["n", `r${i}`]], { deliveries: 1 });
      await addStuckEntries(fixture.redis, stream, "workers", [["n", `d${i}`]], { deliveries: 5 });
    }
    const group = groupConfig(stream, { maxDeliveries: 5 });
    await fixture.redis.xadd(group.deadLetterStream, MAX_ID, "x", "y");
    const before = await pelState(stream);

    for (let sweep = 0; sweep < 3; sweep += 1) {
      const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
      expect(result).toMatchObject({ errorKind: "ids-exhausted", claimed: 0, requeued: 0 });
      expect(result.error).toContain(group.deadLetterStream);
    }

    expect(await fixture.redis.xlen(stream)).toBe(10);
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(1);
    expect(await pelState(stream)).toEqual(before);
    const idle = (await pendingEntries(fixture.redis, stream, "workers")).map((e) => e.idleMs);
    expect(idle.every((ms) => ms >= 3_600_000)).toBe(true);
  });

  it("refuses a requeue target whose ids ran out, and sweeps once room is made", async () => {
    const stream = uniquePrefix("target-full");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3));
    const group = groupConfig(stream, { requeueStream: `${stream}:retry` });
    // 10 ids left before the last possible one: fewer than one call may claim (64 at first).
    await fixture.redis.xadd(
      group.requeueStream,
      "18446744073709551615-18446744073709551605",
      "x",
      "y",
    );
    const context = sweepContext(fixture.redis, { batchSize: 1000 });
    const refused = await sweepOnce(group, context, neverAborted);
    expect(refused.errorKind).toBe("ids-exhausted");
    expect(await fixture.redis.xlen(group.requeueStream)).toBe(1);

    await fixture.redis.del(group.requeueStream);
    const swept = await sweepOnce(group, context, neverAborted);
    expect(swept).toMatchObject({ requeued: 3, complete: true });
  });

  it("is refused by Redis before it starts when memory is full (shebang script), changing nothing", async () => {
    const stream = uniquePrefix("oom");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3));
    const before = await pelState(stream);
    await fixture.redis.config("SET", "maxmemory", "1");
    try {
      const result = await sweepOnce(
        groupConfig(stream),
        sweepContext(fixture.redis),
        neverAborted,
      );
      expect(result.error).toMatch(/OOM/u);
    } finally {
      await fixture.redis.config("SET", "maxmemory", "0");
    }
    expect(await pelState(stream)).toEqual(before);
    expect(await fixture.redis.xlen(stream)).toBe(3);
  });
});

describe("x-delivery-count from producers", () => {
  it("trusts only canonical non-negative integers, counts anything else as 0 and logs the ids", async () => {
    const stream = uniquePrefix("counts");
    const invalid = ["nan", "-1", "-99999", "1e308", "0x10", " 3", "03", "1234567890123456", ""];
    const valid: [string, string][] = [
      ["3", "4"],
      ["0", "1"],
    ];
    const bodies = [...invalid, ...valid.map(([value]) => value)].map((value, i) => [
      "n",
      String(i),
      "x-delivery-count",
      value,
    ]);
    const ids = await addStuckEntries(fixture.redis, stream, "workers", bodies, { deliveries: 1 });
    const group = groupConfig(stream, { maxDeliveries: 5, requeueStream: `${stream}:retry` });
    const { logger, lines } = captureLogger();

    const result = await sweepOnce(group, sweepContext(fixture.redis, { logger }), neverAborted);

    expect(result).toMatchObject({ claimed: 11, requeued: 11, deadLettered: 0 });
    expect(result.invalidDeliveryCounts).toBe(invalid.length);
    const copies = await streamEntries(fixture.redis, group.requeueStream);
    expect(copies.map((copy) => copy.fields.get("x-delivery-count"))).toEqual([
      ...invalid.map(() => "1"),
      ...valid.map(([, expected]) => expected),
    ]);
    const warning = lines.find((line) => String(line.msg).startsWith("x-delivery-count"));
    expect(warning).toMatchObject({ level: 40, count: invalid.length, stream });
    expect(warning?.ids).toEqual(ids.slice(0, invalid.length));
  });

  it("lets a poison entry with x-delivery-count -1 reach the dead-letter stream", async () => {
    const stream = uniquePrefix("negative");
    await addStuckEntries(fixture.redis, stream, "workers", [["x-delivery-count", "-1"]], {
      deliveries: 3,
    });
    const group = groupConfig(stream, { maxDeliveries: 3 });
    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
    expect(result).toMatchObject({ deadLetteredMaxDeliveries: 1, requeued: 0 });
  });
});

describe("ids above 2^53", () => {
  it.each([1, 2, 1000])("sweeps every entry exactly once with batchSize %i", async (batchSize) => {
    const stream = uniquePrefix("big-ids");
    const ids = [
      "9007199254740992-0",
      "9007199254740993-0",
      "9007199254740993-9007199254740993",
      "9007199254740993-9007199254740995",
      "18446744073709551614-5",
      "18446744073709551614-6",
      "18446744073709551615-0",
    ];
    await addStuckWithIds(fixture.redis, stream, ids);
    const result = await sweepOnce(
      groupConfig(stream),
      sweepContext(fixture.redis, { batchSize }),
      neverAborted,
    );
    expect(result).toMatchObject({
      examined: ids.length,
      claimed: ids.length,
      requeued: ids.length,
      complete: true,
    });
    expect(await pendingEntries(fixture.redis, stream, "workers")).toEqual([]);
    const copies = (await streamEntries(fixture.redis, stream)).slice(ids.length);
    expect(copies.map((copy) => copy.fields.get("x-original-id"))).toEqual(ids);
  });
});

describe("the janitor's consumer name", () => {
  it("refuses a group where a consumer of that name holds entries, naming it, touching nothing", async () => {
    const stream = uniquePrefix("collision");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2), {
      consumer: JANITOR_CONSUMER,
    });
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2));
    const before = await pelState(stream);

    const result = await sweepOnce(groupConfig(stream), sweepContext(fixture.redis), neverAborted);

    expect(result.errorKind).toBe("consumer-collision");
    expect(result.error).toContain(JANITOR_CONSUMER);
    expect(await pelState(stream)).toEqual(before);
    expect(await fixture.redis.xlen(stream)).toBe(4);
  });

  it("uses sweep.consumerName, so the application's consumer of the default name is swept like any other", async () => {
    const stream = uniquePrefix("renamed");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2), {
      consumer: JANITOR_CONSUMER,
    });
    const result = await sweepOnce(
      groupConfig(stream),
      sweepContext(fixture.redis, { janitorConsumer: "janitor-of-orders" }),
      neverAborted,
    );
    expect(result).toMatchObject({ requeued: 2, complete: true });
    const consumers = (await fixture.redis.call("XINFO", "CONSUMERS", stream, "workers")) as [
      string,
      string,
    ][];
    expect(consumers.map((flat) => flat[1])).toEqual([JANITOR_CONSUMER]);
  });
});
