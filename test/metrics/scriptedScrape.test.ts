import { describe, expect, it } from "vitest";
import { readGroupSnapshots } from "../../src/scrape/readGroupSnapshots.js";
import { type GroupReading, type ScrapeSnapshot } from "../../src/scrape/GroupReading.js";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { commandCalls } from "../support/commandStats.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";

const fixture = useRedisServer();

/** Every kind of group the scrape distinguishes, on one server. */
async function mixOfGroups(): Promise<ResolvedGroup[]> {
  const redis = fixture.redis;
  const normal = uniquePrefix("normal");
  await addStuckEntries(redis, normal, "workers", numberedBodies(3), { deliveries: 2 });
  await addStuckEntries(redis, normal, "workers", numberedBodies(2), { consumer: "other" });
  await redis.xadd(`{${normal}}:dead`, "*", "n", "1");
  await redis.xadd(`{${normal}}:dead`, "*", "n", "2");
  // A second configured group on the same stream: one XINFO GROUPS serves both.
  await addStuckEntries(redis, normal, "billing", numberedBodies(1));
  const emptyPel = uniquePrefix("empty-pel");
  await redis.xgroup("CREATE", emptyPel, "workers", "0", "MKSTREAM");
  const ids = await Promise.all([1, 2, 3].map(() => redis.xadd(emptyPel, "*", "n", "x")));
  // A deleted entry the group has not read makes Redis report its lag as null.
  await redis.xdel(emptyPel, String(ids[1]));
  const missing = uniquePrefix("missing");
  const noGroup = uniquePrefix("no-group");
  await redis.xadd(noGroup, "*", "n", "1");
  const wrongType = uniquePrefix("wrong-type");
  await redis.set(wrongType, "not a stream");
  const deadLetterWrongType = uniquePrefix("dead-letter-wrong-type");
  await addStuckEntries(redis, deadLetterWrongType, "workers", numberedBodies(1));
  await redis.set(`{${deadLetterWrongType}}:dead`, "not a stream");
  return [
    groupConfig(normal),
    groupConfig(missing),
    groupConfig(normal, { group: "billing" }),
    groupConfig(emptyPel),
    groupConfig(noGroup),
    groupConfig(wrongType),
    groupConfig(deadLetterWrongType),
    groupConfig(normal, { group: "nobody" }),
  ];
}

/** Idle times grow between two reads: equal within a second, then compared as equal. */
function comparable(snapshot: ScrapeSnapshot, reference: ScrapeSnapshot): ScrapeSnapshot {
  expect(Math.abs(snapshot.nowMs - reference.nowMs)).toBeLessThan(1000);
  const groups = snapshot.groups.map((reading, index): GroupReading => {
    const other = reference.groups[index];
    if (reading.state !== "ok" || other?.state !== "ok") return reading;
    const idleMs = other.values.oldestPendingIdleMs;
    expect(Math.abs(reading.values.oldestPendingIdleMs - idleMs)).toBeLessThan(1000);
    return { ...reading, values: { ...reading.values, oldestPendingIdleMs: idleMs } };
  });
  return { ...snapshot, nowMs: reference.nowMs, groups };
}

async function scriptCalls(): Promise<number> {
  const { evalsha = 0, eval: evalCalls = 0 } = await commandCalls(fixture.redis, [
    "evalsha",
    "eval",
  ]);
  return evalsha + evalCalls;
}

describe("the scripted scrape (readGroupStats)", () => {
  it("reads exactly what the pipelined commands read, for every kind of group", async () => {
    const groups = await mixOfGroups();
    for (const perConsumer of [false, true]) {
      const options = { timeoutMs: 5000, perConsumer };
      const pipelined = await readGroupSnapshots(fixture.redis, groups, {
        ...options,
        scripted: false,
      });
      const states = pipelined.groups.map((reading) => reading.state);
      expect(states).toEqual([
        "ok",
        "no-stream",
        "ok",
        "ok",
        "no-group",
        "wrong-type",
        "ok",
        "no-group",
      ]);
      const scripted = await readGroupSnapshots(fixture.redis, groups, options);
      expect(comparable(scripted, pipelined)).toEqual(pipelined);
      // Split into calls of 3 groups: a stream's groups in two calls read the same.
      const split = await readGroupSnapshots(fixture.redis, groups, {
        ...options,
        groupsPerCall: 3,
      });
      expect(comparable(split, pipelined)).toEqual(pipelined);
    }
  });

  it("spells out the values it read (so the comparison above compares something)", async () => {
    const groups = await mixOfGroups();
    const snapshot = await readGroupSnapshots(fixture.redis, groups, {
      timeoutMs: 5000,
      perConsumer: true,
    });
    const [normal, , billing, emptyPel, , wrongType, deadLetterWrongType] = snapshot.groups;
    if (normal?.state !== "ok" || billing?.state !== "ok" || emptyPel?.state !== "ok") {
      throw new Error(`unexpected states ${JSON.stringify(snapshot.groups)}`);
    }
    expect(normal.values).toMatchObject({
      pending: 5,
      oldestPendingDeliveries: 2,
      consumers: [
        ["crashed-consumer", 3],
        ["other", 2],
      ],
      streamLength: 6,
      deadLetterLength: 2,
      // The entry added for billing, not yet read by workers.
      lag: 1,
    });
    expect(normal.values.oldestPendingIdleMs).toBeGreaterThanOrEqual(3_600_000);
    expect(billing.values).toMatchObject({ pending: 1, deadLetterLength: 2, streamLength: 6 });
    expect(emptyPel.values).toMatchObject({
      pending: 0,
      oldestPendingId: undefined,
      oldestPendingIdleMs: 0,
      consumers: [],
      lag: null,
      deadLetterLength: 0,
      streamLength: 2,
    });
    expect(wrongType).toMatchObject({ state: "wrong-type" });
    expect(deadLetterWrongType).toMatchObject({
      state: "ok",
      values: { deadLetterLength: undefined, pending: 1 },
    });
  });

  it("is what a plain server gets: one script call per few hundred groups", async () => {
    const groups = await mixOfGroups();
    const before = await scriptCalls();
    await readGroupSnapshots(fixture.redis, groups, { timeoutMs: 5000, perConsumer: false });
    expect((await scriptCalls()) - before).toBe(1);
    await readGroupSnapshots(fixture.redis, groups, {
      timeoutMs: 5000,
      perConsumer: false,
      scripted: false,
    });
    expect((await scriptCalls()) - before).toBe(1);
  });
});
