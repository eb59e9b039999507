import { describe, expect, it } from "vitest";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import {
  addStuckEntries,
  numberedBodies,
  pendingEntries,
  streamEntries,
} from "../support/fabricatePel.js";
import { expectExactlyOnce } from "../support/expectExactlyOnce.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import {
  captureLogger,
  groupConfig,
  JANITOR_CONSUMER,
  neverAborted,
  sweepContext,
} from "../support/sweepHarness.js";

const fixture = useRedisServer();

async function consumerNames(stream: string, group: string): Promise<string[]> {
  const reply = (await fixture.redis.call("XINFO", "CONSUMERS", stream, group)) as unknown[][];
  return reply.map((flat) => String(flat[1]));
}

describe("sweepOnce: requeue", () => {
  it("requeues a crashed consumer's entries with the fields in order and the metadata after", async () => {
    const stream = uniquePrefix("requeue");
    const ids = await addStuckEntries(
      fixture.redis,
      stream,
      "workers",
      numberedBodies(3, ["kind", "order"]),
      {
        deliveries: 2,
      },
    );
    const group = groupConfig(stream);

    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);

    expect(result).toMatchObject({
      claimed: 3,
      requeued: 3,
      deadLettered: 0,
      ghosts: 0,
      complete: true,
    });
    expect(await pendingEntries(fixture.redis, stream, "workers")).toEqual([]);
    const copies = (await streamEntries(fixture.redis, stream)).slice(3);
    expect(copies.map((c) => c.raw)).toEqual(
      ids.map((id, i) => [
        "n",
        String(i),
        "kind",
        "order",
        "x-original-id",
        id,
        "x-delivery-count",
        "2",
      ]),
    );
    expect(await consumerNames(stream, "workers")).not.toContain(JANITOR_CONSUMER);
    await expect(
      expectExactlyOnce(fixture.redis, {
        stream,
        group: "workers",
        deadLetterStream: group.deadLetterStream,
        originalIds: ids,
      }),
    ).resolves.toEqual({ stillPending: 0, requeued: 3, deadLettered: 0 });
  });

  it("leaves entries that are not idle long enough alone", async () => {
    const stream = uniquePrefix("fresh");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2), { idleMs: 10 });
    const result = await sweepOnce(
      groupConfig(stream, { minIdleMs: 60_000 }),
      sweepContext(fixture.redis),
      neverAborted,
    );
    expect(result).toMatchObject({ claimed: 0, examined: 2, complete: true });
    expect(await pendingEntries(fixture.redis, stream, "workers")).toHaveLength(2);
  });

  it("dead-letters a poison entry after exactly maxDeliveries consumer deliveries, across two requeues", async () => {
    const stream = uniquePrefix("poison");
    const [originalId = ""] = await addStuckEntries(
      fixture.redis,
      stream,
      "workers",
      [["job", "poison"]],
      {
        deliveries: 1,
      },
    );
    const group = groupConfig(stream, { maxDeliveries: 3 });
    const context = sweepContext(fixture.redis);
    let consumerDeliveries = 1;

    // Deliveries 1 and 2 end in requeues; the consumer reads each copy once and crashes again.
    for (let round = 1; round <= 2; round += 1) {
      const result = await sweepOnce(group, context, neverAborted);
      expect(result).toMatchObject({ claimed: 1, requeued: 1, deadLettered: 0 });
      const reply = (await fixture.redis.call(
        "XREADGROUP",
        "GROUP",
        "workers",
        "c2",
        "STREAMS",
        stream,
        ">",
      )) as [string, [string, string[]][]][];
      const copyId = reply[0]?.[1][0]?.[0] ?? "";
      consumerDeliveries += 1;
      await fixture.redis.call(
        "XCLAIM",
        stream,
        "workers",
        "c2",
        0,
        copyId,
        "IDLE",
        3_600_000,
        "JUSTID",
      );
    }
    expect(consumerDeliveries).toBe(3);

    const result = await sweepOnce(group, context, neverAborted);
    expect(result).toMatchObject({
      claimed: 1,
      requeued: 0,
      deadLettered: 1,
      deadLetteredMaxDeliveries: 1,
    });
    const [deadLetter] = await streamEntries(fixture.redis, group.deadLetterStream);
    // The original fields first; a metadata field of the copy is replaced, not duplicated.
    expect(deadLetter?.raw.slice(0, 2)).toEqual(["job", "poison"]);
    expect(deadLetter?.raw.slice(2)).toEqual([
      "x-original-id",
      originalId,
      "x-original-stream",
      stream,
      "x-original-group",
      "workers",
      "x-delivery-count",
      "3",
      "x-dead-letter-reason",
      "max-deliveries",
      "x-dead-lettered-at",
      expect.stringMatching(/^\d{13}$/u),
      "x-last-consumer",
      "c2",
    ]);
    expect(await pendingEntries(fixture.redis, stream, "workers")).toEqual([]);
  });

  it("dead-letters every claimed entry with action dead-letter, capped with MAXLEN ~", async () => {
    const stream = uniquePrefix("dl-action");
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(500));
    const group = groupConfig(stream, { action: "dead-letter", deadLetterMaxLen: 100 });
    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
    expect(result).toMatchObject({ claimed: 500, deadLettered: 500, deadLetteredAction: 500 });
    const length = await fixture.redis.xlen(group.deadLetterStream);
    expect(length).toBeGreaterThanOrEqual(100);
    expect(length).toBeLessThan(500);
    const [first] = await streamEntries(fixture.redis, group.deadLetterStream);
    expect(first?.fields.get("x-dead-letter-reason")).toBe("action");
    expect(ids).toHaveLength(500);
  });

  it("puts the default dead-letter stream in the source's hash slot", () => {
    expect(groupConfig("orders").deadLetterStream).toBe("{orders}:dead");
    expect(groupConfig("{tenant}.orders").deadLetterStream).toBe("{tenant}.orders:dead");
  });
});

describe("sweepOnce: ghosts", () => {
  it("reports entries deleted with XDEL and trimmed with XTRIM, with their ids", async () => {
    const stream = uniquePrefix("ghosts");
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(10));
    await fixture.redis.xdel(stream, ids[5] ?? "");
    await fixture.redis.xtrim(stream, "MAXLEN", 6); // 9 left after XDEL: removes the three oldest
    const { logger, lines } = captureLogger();

    const result = await sweepOnce(
      groupConfig(stream),
      sweepContext(fixture.redis, { logger }),
      neverAborted,
    );

    const expectedGhosts = [ids[0], ids[1], ids[2], ids[5]];
    expect(result.ghosts).toBe(4);
    expect([...result.ghostIds].sort()).toEqual([...expectedGhosts].sort());
    expect(result.claimed).toBe(6);
    const warning = lines.find((line) => line.msg?.toString().startsWith("ghosts"));
    expect(warning).toMatchObject({ level: 40, stream, group: "workers", count: 4 });
    expect(await pendingEntries(fixture.redis, stream, "workers")).toEqual([]);
  });
});
