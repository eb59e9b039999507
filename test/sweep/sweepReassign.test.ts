import { describe, expect, it } from "vitest";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import {
  consumeOneFresh,
  addStuckEntries,
  numberedBodies,
  pendingEntries,
  streamEntries,
} from "../support/fabricatePel.js";
import { scriptWithConsumersReply } from "../support/fakeConsumersReply.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";
import { waitFor } from "../support/waitFor.js";

const fixture = useRedisServer();
/** The test waits (on state) a few times this long; live consumers act within it even on a busy machine. */
const MIN_IDLE_MS = 250;

async function consumerIdle(stream: string): Promise<Map<string, number>> {
  const reply = (await fixture.redis.call("XINFO", "CONSUMERS", stream, "workers")) as unknown[][];
  return new Map(reply.map((flat) => [String(flat[1]), Number(flat[5])]));
}

/** Waits until every pending entry and every consumer has been quiet for MIN_IDLE_MS. */
async function waitUntilIdle(stream: string, consumers = true): Promise<void> {
  await waitFor(
    async () => {
      const pending = await pendingEntries(fixture.redis, stream, "workers");
      const idle = [...(await consumerIdle(stream)).values()];
      return (
        pending.every((e) => e.idleMs >= MIN_IDLE_MS) &&
        (!consumers || idle.every((ms) => ms >= MIN_IDLE_MS))
      );
    },
    { what: "entries and consumers to be idle" },
  );
}

/** One consumer's XINFO CONSUMERS fields (7.0: name, pending, idle; 7.2+: also inactive). */
async function consumerInfo(stream: string, consumer: string): Promise<Map<string, unknown>> {
  const reply = (await fixture.redis.call("XINFO", "CONSUMERS", stream, "workers")) as unknown[][];
  const flat = reply.find((fields) => String(fields[1]) === consumer) ?? [];
  const fields = new Map<string, unknown>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(String(flat[i]), flat[i + 1]);
  return fields;
}

/**
 * A consumer's poll of its own PEL (what reassign's consumers must do), which finds nothing: the
 * consumer is created and seen on every version, yet has never received an entry.
 */
async function pollOwnPel(stream: string, consumer: string): Promise<void> {
  const reply = (await fixture.redis.call(
    "XREADGROUP",
    "GROUP",
    "workers",
    consumer,
    "STREAMS",
    stream,
    "0",
  )) as [string, unknown[]][];
  expect(reply[0]?.[1]).toEqual([]);
}

describe("reassign liveness", () => {
  it("never takes the janitor's own claims for a sign of life: two dead consumers keep their entries, untouched", async () => {
    const stream = uniquePrefix("dead-pair");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(10), {
      consumer: "dead-a",
    });
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(10), {
      consumer: "dead-b",
    });
    await waitUntilIdle(stream);
    const before = (await pendingEntries(fixture.redis, stream, "workers")).map((e) => [
      e.id,
      e.consumer,
      e.deliveries,
    ]);
    const group = groupConfig(stream, { action: "reassign", minIdleMs: MIN_IDLE_MS });

    // Back to back: the first sweep's XCLAIMs (putting entries back) reset the owners' idle time
    // on Redis 7.0, which made them look alive to the next sweep.
    for (let sweep = 0; sweep < 4; sweep += 1) {
      const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
      expect(result).toMatchObject({ reassigned: 0, leftPending: 20, claimed: 20 });
    }

    const after = await pendingEntries(fixture.redis, stream, "workers");
    expect(after.map((e) => [e.id, e.consumer, e.deliveries])).toEqual(before);
    expect(after.every((e) => e.idleMs >= MIN_IDLE_MS)).toBe(true);
  });

  it("spreads hand-offs over the live consumers, counts each as a delivery, and dead-letters at maxDeliveries", async () => {
    const stream = uniquePrefix("handoffs");
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(10), {
      consumer: "crashed",
    });
    const group = groupConfig(stream, {
      action: "reassign",
      minIdleMs: MIN_IDLE_MS,
      maxDeliveries: 3,
    });
    const context = sweepContext(fixture.redis);
    const rounds = [];
    // Two consumers stay healthy (they read and acknowledge new work) but never re-read their
    // own PEL: what is handed to them stays pending, and becomes idle again.
    for (let round = 1; round <= 3; round += 1) {
      await waitUntilIdle(stream, false);
      await consumeOneFresh(fixture.redis, stream, "live-1");
      await consumeOneFresh(fixture.redis, stream, "live-2");
      const result = await sweepOnce(group, context, neverAborted);
      const pending = (await pendingEntries(fixture.redis, stream, "workers")).filter((e) =>
        ids.includes(e.id),
      );
      rounds.push({ result, pending });
    }

    const [first, second, third] = rounds;
    expect(first?.result).toMatchObject({ reassigned: 10, deadLettered: 0 });
    const firstOwners = first?.pending.map((e) => e.consumer) ?? [];
    expect(firstOwners.filter((c) => c === "live-1")).toHaveLength(5);
    expect(firstOwners.filter((c) => c === "live-2")).toHaveLength(5);
    expect(first?.pending.every((e) => e.deliveries === 2)).toBe(true);
    // Never back to the same owner.
    expect(second?.result).toMatchObject({ reassigned: 10, deadLettered: 0 });
    expect(second?.pending.map((e) => e.consumer)).toEqual(
      firstOwners.map((c) => (c === "live-1" ? "live-2" : "live-1")),
    );
    expect(second?.pending.every((e) => e.deliveries === 3)).toBe(true);
    expect(third?.result).toMatchObject({ reassigned: 0, deadLetteredMaxDeliveries: 10 });
    expect(third?.pending).toEqual([]);
    const deadLetters = await streamEntries(fixture.redis, group.deadLetterStream);
    expect(deadLetters.map((e) => e.fields.get("x-delivery-count"))).toEqual(
      Array<string>(10).fill("3"),
    );
  });

  it("hands entries to a consumer that polls but has never received one (Redis 7.2+ says inactive -1)", async () => {
    const stream = uniquePrefix("never-received");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(10), {
      consumer: "crashed",
    });
    await fixture.redis.xgroup("CREATECONSUMER", stream, "workers", "fresh");
    await pollOwnPel(stream, "fresh");
    // Redis 7.2+ and Valkey: no successful read yet; 7.0 has no such field.
    const inactive = (await consumerInfo(stream, "fresh")).get("inactive");
    if (inactive !== undefined) expect(inactive).toBe(-1);
    const group = groupConfig(stream, { action: "reassign", minIdleMs: MIN_IDLE_MS });

    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);

    expect(result).toMatchObject({ claimed: 10, reassigned: 10, leftPending: 0 });
    const pending = await pendingEntries(fixture.redis, stream, "workers");
    expect(pending.map((e) => [e.consumer, e.deliveries])).toEqual(
      Array<[string, number]>(10).fill(["fresh", 2]),
    );
  });

  it("judges liveness by idle (the last read attempt) on a 7.2+ reply, whatever inactive says", async () => {
    const stream = uniquePrefix("seen-not-served");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(10), {
      consumer: "crashed",
    });
    // Both poll: one has never received an entry, the other not for ten minutes.
    for (const consumer of ["fresh", "starved"]) {
      await fixture.redis.xgroup("CREATECONSUMER", stream, "workers", consumer);
      await pollOwnPel(stream, consumer);
    }
    const redis = fixture.server.client();
    redis.defineCommand("sjSweepPage", {
      lua: scriptWithConsumersReply("sweepPage.lua", {
        fresh: -1,
        starved: 600_000,
        crashed: 3_600_000,
      }),
    });
    const group = groupConfig(stream, { action: "reassign", minIdleMs: MIN_IDLE_MS });

    const result = await sweepOnce(group, sweepContext(redis), neverAborted);

    expect(result).toMatchObject({ claimed: 10, reassigned: 10, leftPending: 0 });
    const owners = (await pendingEntries(fixture.redis, stream, "workers")).map((e) => e.consumer);
    expect(owners.filter((c) => c === "fresh")).toHaveLength(5);
    expect(owners.filter((c) => c === "starved")).toHaveLength(5);
  });
});
