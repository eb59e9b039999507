import { describe, expect, it } from "vitest";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import { addStuckEntries, numberedBodies, streamEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";

const fixture = useRedisServer();

/** A consumer that polls its own (empty) PEL: seen within minIdleMs, so reassign hands to it. */
async function pollAsLiveConsumer(stream: string, consumer: string): Promise<void> {
  await fixture.redis.call("XREADGROUP", "GROUP", "workers", consumer, "STREAMS", stream, "0");
}

describe("sweepOnce: the ids of what each action handled (at most 20 per action)", () => {
  it("requeue: the claimed source ids, not the copies' new ids; nothing else listed", async () => {
    const stream = uniquePrefix("ids-requeue");
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3));

    const result = await sweepOnce(groupConfig(stream), sweepContext(fixture.redis), neverAborted);

    expect(result).toMatchObject({ requeued: 3, requeuedIds: ids });
    expect(result).toMatchObject({ reassignedIds: [], deadLetteredIds: [] });
    const copies = (await streamEntries(fixture.redis, stream)).slice(3);
    expect(copies.map((copy) => copy.id)).not.toContain(result.requeuedIds[0]);
  });

  it("requeue of a copy (metadata in its body): its own pending id, not x-original-id", async () => {
    const stream = uniquePrefix("ids-requeue-copy");
    const body = ["n", "1", "x-original-id", "1-1", "x-delivery-count", "3"];
    const ids = await addStuckEntries(fixture.redis, stream, "workers", [body]);

    const result = await sweepOnce(groupConfig(stream), sweepContext(fixture.redis), neverAborted);

    expect(result).toMatchObject({ requeued: 1, requeuedIds: ids });
  });

  it("requeue of 25 in one call: the first 20 in PEL order", async () => {
    const stream = uniquePrefix("ids-requeue-25");
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(25));

    const result = await sweepOnce(groupConfig(stream), sweepContext(fixture.redis), neverAborted);

    expect(result).toMatchObject({ requeued: 25, pages: 1, requeuedIds: ids.slice(0, 20) });
  });

  it("dead-letter of 25 over several calls: the first 20 in PEL order, across the calls", async () => {
    const stream = uniquePrefix("ids-dead-letter-25");
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(25));
    const group = groupConfig(stream, { action: "dead-letter" });

    const result = await sweepOnce(
      group,
      sweepContext(fixture.redis, { batchSize: 10 }),
      neverAborted,
    );

    expect(result).toMatchObject({ deadLettered: 25, deadLetteredIds: ids.slice(0, 20) });
    expect(result.pages).toBeGreaterThanOrEqual(3);
    expect(result.requeuedIds).toEqual([]);
  });

  it("requeue past maxDeliveries: the dead-lettered ids and the requeued ids apart", async () => {
    const stream = uniquePrefix("ids-mixed");
    const spent = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3), {
      deliveries: 5,
    });
    const fresh = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2));

    const result = await sweepOnce(groupConfig(stream), sweepContext(fixture.redis), neverAborted);

    expect(result).toMatchObject({
      deadLetteredMaxDeliveries: 3,
      deadLetteredIds: spent,
      requeued: 2,
      requeuedIds: fresh,
    });
  });

  it("reassign: the ids handed to a live consumer, the first 20 of 25", async () => {
    const stream = uniquePrefix("ids-reassign");
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(25));
    await pollAsLiveConsumer(stream, "alive");
    const group = groupConfig(stream, { action: "reassign", minIdleMs: 60_000 });

    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);

    expect(result).toMatchObject({ reassigned: 25, reassignedIds: ids.slice(0, 20) });
    expect(result).toMatchObject({ requeuedIds: [], deadLetteredIds: [] });
  });
});
