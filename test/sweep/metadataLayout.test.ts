import { describe, expect, it } from "vitest";
import { DEAD_LETTER_METADATA, REQUEUE_METADATA } from "../../src/core/copyMetadata.js";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import { addStuckEntries, streamEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";

const fixture = useRedisServer();

type Entry = [id: string, fields: string[]];

/** A consumer as often written with ioredis: the payload is the first field, read by position. */
function firstField(entry: Entry): [string | undefined, string | undefined] {
  const [, [name, value]] = entry;
  return [name, value];
}

/** Reads the next new entry as `consumer`, then crashes: the entry stays pending, idle. */
async function readAndCrash(stream: string, consumer: string): Promise<Entry> {
  const reply = (await fixture.redis.call(
    "XREADGROUP",
    "GROUP",
    "workers",
    consumer,
    "COUNT",
    1,
    "STREAMS",
    stream,
    ">",
  )) as [string, Entry[]][];
  const entry = reply[0]?.[1][0];
  if (entry === undefined) throw new Error("nothing to read");
  await fixture.redis.call(
    "XCLAIM",
    stream,
    "workers",
    consumer,
    0,
    entry[0],
    "IDLE",
    3_600_000,
    "JUSTID",
  );
  return entry;
}

describe("metadata after the original fields", () => {
  it("gives a positional reader the same first field in the original, a copy, and a copy of a copy of a copy", async () => {
    const stream = uniquePrefix("positional");
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    const originalId = await fixture.redis.xadd(
      stream,
      "*",
      "payload",
      '{"order":42}',
      "kind",
      "order",
    );
    const group = groupConfig(stream, { maxDeliveries: 10 });
    const seen: Entry[] = [await readAndCrash(stream, "reader")];

    for (let requeue = 1; requeue <= 3; requeue += 1) {
      const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
      expect(result).toMatchObject({ requeued: 1 });
      seen.push(await readAndCrash(stream, "reader"));
    }

    expect(seen.map(firstField)).toEqual(Array(4).fill(["payload", '{"order":42}']));
    expect(seen[3]?.[1]).toEqual([
      "payload",
      '{"order":42}',
      "kind",
      "order",
      "x-original-id",
      originalId,
      "x-delivery-count",
      "3",
    ]);
  });

  it("moves metadata-named fields of the original from the middle to the end, once", async () => {
    const stream = uniquePrefix("middle");
    const body = [
      "a",
      "1",
      "x-original-id",
      "first-life",
      "b",
      "2",
      "x-delivery-count",
      "2",
      "c",
      "3",
    ];
    await addStuckEntries(fixture.redis, stream, "workers", [body], { deliveries: 1 });
    await addStuckEntries(fixture.redis, stream, "dead-letters", [body], { deliveries: 1 });
    const requeue = groupConfig(stream, { requeueStream: `${stream}:copies` });
    const deadLetter = groupConfig(stream, {
      group: "dead-letters",
      action: "dead-letter",
      deadLetterStream: `${stream}:dead`,
    });

    await sweepOnce(requeue, sweepContext(fixture.redis), neverAborted);
    await sweepOnce(deadLetter, sweepContext(fixture.redis), neverAborted);

    const [copy] = await streamEntries(fixture.redis, requeue.requeueStream);
    expect(copy?.raw).toEqual([
      "a",
      "1",
      "b",
      "2",
      "c",
      "3",
      "x-original-id",
      "first-life",
      "x-delivery-count",
      "3",
    ]);
    const [dead] = await streamEntries(fixture.redis, deadLetter.deadLetterStream);
    expect(dead?.raw.slice(0, 6)).toEqual(["a", "1", "b", "2", "c", "3"]);
    expect(dead?.raw.slice(6).filter((_, i) => i % 2 === 0)).toEqual([
      "x-original-id",
      "x-original-stream",
      "x-original-group",
      "x-delivery-count",
      "x-dead-letter-reason",
      "x-dead-lettered-at",
      "x-last-consumer",
    ]);
    expect(dead?.fields.get("x-original-id")).toBe("first-life");
    expect(dead?.fields.get("x-delivery-count")).toBe("3");
  });

  it("copies plain entries and entries with metadata-named fields side by side in one page, each its own way", async () => {
    const stream = uniquePrefix("mixed");
    // A long plain entry, a redriven dead letter (its dead-letter fields are the user's data to a
    // requeue, metadata to a dead-letter copy), then a short plain entry: the copies reuse one
    // argument list, so no field of one may leak into the next.
    const bodies = [
      ["a", "1", "b", "2", "c", "3", "d", "4", "e", "5"],
      ["x-dead-letter-reason", "action", "a", "1", "x-original-stream", "elsewhere"],
      ["z", "26"],
    ];
    const ids = await addStuckEntries(fixture.redis, stream, "workers", bodies, { deliveries: 1 });
    await fixture.redis.xgroup("CREATE", stream, "dead-letters", "0");
    await fixture.redis.call("XREADGROUP", "GROUP", "dead-letters", "c", "STREAMS", stream, ">");
    await fixture.redis.call(
      "XCLAIM",
      stream,
      "dead-letters",
      "c",
      0,
      ...ids,
      "IDLE",
      3_600_000,
      "JUSTID",
    );
    const requeue = groupConfig(stream, { requeueStream: `${stream}:copies` });
    const deadLetter = groupConfig(stream, {
      group: "dead-letters",
      action: "dead-letter",
      deadLetterStream: `${stream}:dead`,
    });

    expect((await sweepOnce(requeue, sweepContext(fixture.redis), neverAborted)).pages).toBe(1);
    expect((await sweepOnce(deadLetter, sweepContext(fixture.redis), neverAborted)).pages).toBe(1);

    const copies = await streamEntries(fixture.redis, requeue.requeueStream);
    expect(copies.map((copy) => copy.raw)).toEqual(
      bodies.map((body, i) => [...body, "x-original-id", ids[i], "x-delivery-count", "1"]),
    );
    const dead = await streamEntries(fixture.redis, deadLetter.deadLetterStream);
    expect(dead.map((entry) => entry.raw.slice(0, entry.raw.indexOf("x-original-id")))).toEqual([
      bodies[0],
      ["a", "1"],
      bodies[2],
    ]);
    for (const [i, entry] of dead.entries()) {
      expect(entry.raw.slice(entry.raw.indexOf("x-original-id")).length).toBe(14);
      expect(entry.fields.get("x-original-id")).toBe(ids[i]);
      expect(entry.fields.get("x-original-stream")).toBe(stream);
      expect(entry.fields.get("x-dead-letter-reason")).toBe("action");
      expect(entry.fields.get("x-last-consumer")).toBe("c");
    }
  });

  it("writes each copy's metadata in the order of the shared lists, plain entry or not", async () => {
    // The script sets metadata values by name; the names and their order come from
    // includes/metadata.lua, which test/scripts/sharedConstants.test.ts ties to copyMetadata.ts.
    const stream = uniquePrefix("order");
    const bodies = [
      ["a", "1"],
      ["x-delivery-count", "1", "a", "2", "x-original-id", "0-1"],
    ];
    const ids = await addStuckEntries(fixture.redis, stream, "workers", bodies, { deliveries: 1 });
    await fixture.redis.xgroup("CREATE", stream, "dead-letters", "0");
    await fixture.redis.call("XREADGROUP", "GROUP", "dead-letters", "c", "STREAMS", stream, ">");
    await fixture.redis.call(
      "XCLAIM",
      stream,
      "dead-letters",
      "c",
      0,
      ...ids,
      "IDLE",
      3_600_000,
      "RETRYCOUNT",
      1,
      "JUSTID",
    );
    const requeue = groupConfig(stream, { requeueStream: `${stream}:copies` });
    const deadLetter = groupConfig(stream, {
      group: "dead-letters",
      action: "dead-letter",
      deadLetterStream: `${stream}:dead`,
    });
    await sweepOnce(requeue, sweepContext(fixture.redis), neverAborted);
    await sweepOnce(deadLetter, sweepContext(fixture.redis), neverAborted);

    const namesAfter = (raw: string[], own: number): string[] =>
      raw.slice(own).filter((_, i) => i % 2 === 0);
    const copies = await streamEntries(fixture.redis, requeue.requeueStream);
    expect(copies.map((copy) => namesAfter(copy.raw, 2))).toEqual([
      [...REQUEUE_METADATA],
      [...REQUEUE_METADATA],
    ]);
    expect(copies[1]?.fields.get("x-delivery-count")).toBe("2");
    const dead = await streamEntries(fixture.redis, deadLetter.deadLetterStream);
    expect(dead.map((entry) => namesAfter(entry.raw, 2))).toEqual([
      [...DEAD_LETTER_METADATA],
      [...DEAD_LETTER_METADATA],
    ]);
    expect(dead[1]?.fields.get("x-original-id")).toBe("0-1");
    expect(dead[1]?.fields.get("x-delivery-count")).toBe("2");
  });
});
