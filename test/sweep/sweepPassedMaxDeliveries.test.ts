import { describe, expect, it } from "vitest";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import type { GroupConfig } from "../../src/core/configTypes.js";
import {
  addStuckEntries,
  consumeOneFresh,
  numberedBodies,
  pendingEntries,
  streamEntries,
} from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";

const fixture = useRedisServer();
const HOUR = 3_600_000;
const MAX_DELIVERIES = 5;

/** Pending for `consumer` as if it had just re-read them: idle 0, delivered `deliveries` times. */
async function fresh(stream: string, count: number, deliveries: number, consumer = "c1") {
  return addStuckEntries(fixture.redis, stream, "workers", numberedBodies(count, ["k", "v"]), {
    consumer,
    idleMs: 0,
    deliveries,
  });
}

function settings(overrides: Partial<GroupConfig>): Partial<GroupConfig> {
  return { minIdleMs: HOUR, maxDeliveries: MAX_DELIVERIES, ...overrides };
}

/** Every entry of the stream `workers` still holds: id -> [owner, deliveries]. */
async function pelState(stream: string): Promise<Map<string, [string, number]>> {
  const pending = await pendingEntries(fixture.redis, stream, "workers");
  return new Map(pending.map((e) => [e.id, [e.consumer, e.deliveries]]));
}

describe("an entry delivered more than maxDeliveries times is dead-lettered whatever its idle time", () => {
  for (const action of ["requeue", "reassign", "dead-letter"] as const) {
    it(`${action}: one sweep dead-letters a fresh entry past maxDeliveries; one at maxDeliveries stays`, async () => {
      const stream = uniquePrefix(`passed-${action}`);
      const [atLimit = ""] = await fresh(stream, 1, MAX_DELIVERIES);
      const [passed = ""] = await fresh(stream, 1, MAX_DELIVERIES + 1);
      const [healthy = ""] = await fresh(stream, 1, 1);
      // A live consumer to hand entries to: reassign must not hand the passed entry over.
      await consumeOneFresh(fixture.redis, stream, "c2");
      const before = await pelState(stream);

      const group = groupConfig(stream, settings({ action }));
      const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);

      expect(result.error).toBeUndefined();
      expect(result).toMatchObject({
        claimed: 1,
        deadLettered: 1,
        deadLetteredMaxDeliveries: 1,
        requeued: 0,
        reassigned: 0,
        claimedFromActiveConsumer: 0,
      });
      const letters = await streamEntries(fixture.redis, group.deadLetterStream);
      expect(letters).toHaveLength(1);
      expect(letters[0]?.raw.slice(0, 4)).toEqual(["n", "0", "k", "v"]);
      expect(Object.fromEntries(letters[0]?.fields ?? [])).toMatchObject({
        "x-original-id": passed,
        "x-original-stream": stream,
        "x-delivery-count": String(MAX_DELIVERIES + 1),
        "x-dead-letter-reason": "max-deliveries",
        "x-last-consumer": "c1",
      });
      // The others are untouched: same owner, same count (the one at maxDeliveries may still be
      // in its last allowed delivery).
      const after = await pelState(stream);
      expect([...after.keys()]).toEqual([atLimit, healthy]);
      expect(after.get(atLimit)).toEqual(before.get(atLimit));
      expect(after.get(healthy)).toEqual(before.get(healthy));
      // The consumer's late XACK of the dead letter is harmless: nothing was pending any more.
      expect(await fixture.redis.xack(stream, "workers", passed)).toBe(0);
    });
  }

  it("handles passed entries among fresh, idle and waiting ones in one window, in runs of each length", async () => {
    const stream = uniquePrefix("passed-mixed");
    const passed: string[] = [];
    const untouched: string[] = [];
    const idle: string[] = [];
    // Runs of 1, 3 and 40 passed entries (the last takes the adjacent-bodies path), between
    // fresh entries and entries idle past minIdleMs.
    for (const runLength of [1, 3, 40]) {
      untouched.push(...(await fresh(stream, 2, 1)));
      passed.push(...(await fresh(stream, runLength, MAX_DELIVERIES + 2)));
      idle.push(
        ...(await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2), {
          consumer: "c1",
          idleMs: 2 * HOUR,
        })),
      );
    }
    untouched.push(...(await fresh(stream, 2, MAX_DELIVERIES)));
    const group = groupConfig(stream, settings({ action: "requeue" }));

    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);

    expect(result.error).toBeUndefined();
    expect(result).toMatchObject({
      deadLetteredMaxDeliveries: passed.length,
      requeued: idle.length,
      claimed: passed.length + idle.length,
    });
    const letters = await streamEntries(fixture.redis, group.deadLetterStream);
    expect(letters.map((l) => l.fields.get("x-original-id"))).toEqual(passed);
    expect([...(await pelState(stream)).keys()]).toEqual(untouched);
  });

  it("with backoff configured, a passed entry is not kept waiting for its tier", async () => {
    const stream = uniquePrefix("passed-backoff");
    const [freshPassed = ""] = await fresh(stream, 1, MAX_DELIVERIES + 1);
    // Idle past minIdleMs but far from its tier (1 h for this delivery count).
    const [waiting = ""] = await addStuckEntries(fixture.redis, stream, "workers", [["w", "1"]], {
      consumer: "c1",
      idleMs: 5000,
      deliveries: MAX_DELIVERIES + 1,
    });
    const [notPassed = ""] = await addStuckEntries(fixture.redis, stream, "workers", [["w", "2"]], {
      consumer: "c1",
      idleMs: 5000,
      deliveries: 2,
    });
    const group = groupConfig(stream, {
      minIdleMs: 1000,
      maxDeliveries: MAX_DELIVERIES,
      backoffMs: [1000, HOUR],
      backoffJitter: 0.2,
    });

    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);

    expect(result.error).toBeUndefined();
    expect(result).toMatchObject({ deadLetteredMaxDeliveries: 2, requeued: 0 });
    const letters = await streamEntries(fixture.redis, group.deadLetterStream);
    expect(letters.map((l) => l.fields.get("x-original-id"))).toEqual([freshPassed, waiting]);
    expect([...(await pelState(stream)).keys()]).toEqual([notPassed]);
  });

  it("monitor never claims, whatever the count", async () => {
    const stream = uniquePrefix("passed-monitor");
    await fresh(stream, 3, MAX_DELIVERIES + 10);
    const before = await pelState(stream);
    const group = groupConfig(stream, settings({ action: "monitor" }));
    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
    expect(result).toMatchObject({ claimed: 0, deadLettered: 0 });
    expect(await pelState(stream)).toEqual(before);
    expect(await fixture.redis.exists(group.deadLetterStream)).toBe(0);
  });

  it("a retry lane's copy re-read past maxDeliveries is dead-lettered, naming the source", async () => {
    const stream = uniquePrefix("passed-lane");
    const [original = ""] = await addStuckEntries(fixture.redis, stream, "workers", [["n", "0"]], {
      consumer: "c1",
      idleMs: 2 * HOUR,
    });
    await fixture.redis.xgroup("CREATE", stream, "audit", "0");
    const config = { retryLane: true, maxDeliveries: MAX_DELIVERIES } as const;
    const context = sweepContext(fixture.redis);
    // The first sweep requeues the stuck entry into the lane (one delivery carried).
    await sweepOnce(groupConfig(stream, { ...config, minIdleMs: 1000 }), context, neverAborted);
    const lane = `{${stream}}:workers:retry`;
    // A consumer reads the copy and re-reads its own PEL over and over (each read a delivery).
    for (let read = 0; read <= MAX_DELIVERIES; read += 1) {
      await fixture.redis.call(
        "XREADGROUP",
        "GROUP",
        "workers",
        "c1",
        "STREAMS",
        lane,
        read ? "0" : ">",
      );
    }
    const [copy] = await pendingEntries(fixture.redis, lane, "workers");
    expect(copy).toMatchObject({ consumer: "c1", deliveries: MAX_DELIVERIES + 1 });
    expect(copy?.idleMs).toBeLessThan(1000);

    const group = groupConfig(stream, { ...config, minIdleMs: HOUR });
    const result = await sweepOnce(group, context, neverAborted);

    expect(result.error).toBeUndefined();
    expect(result).toMatchObject({ deadLetteredMaxDeliveries: 1, requeued: 0 });
    expect(await pendingEntries(fixture.redis, lane, "workers")).toEqual([]);
    const letters = await streamEntries(fixture.redis, group.deadLetterStream);
    expect(Object.fromEntries(letters[0]?.fields ?? [])).toMatchObject({
      "x-original-id": original,
      "x-original-stream": stream,
      "x-delivery-count": String(MAX_DELIVERIES + 2),
      "x-dead-letter-reason": "max-deliveries",
    });
  });
});
