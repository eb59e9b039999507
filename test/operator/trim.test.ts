import { describe, expect, it } from "vitest";
import { safeTrim, type TrimRequest } from "../../src/maintenance/safeTrim.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { addStuckEntries, numberedBodies, pendingEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";

const fixture = useRedisServer();

function trim(request: Partial<TrimRequest> & { stream: string }) {
  return safeTrim(registerScripts(fixture.redis), {
    maxLen: undefined,
    maxAgeMs: 0,
    dryRun: false,
    ...request,
  });
}

async function addEntries(stream: string, count: number): Promise<string[]> {
  const pipeline = fixture.redis.pipeline();
  for (let i = 0; i < count; i += 1) pipeline.xadd(stream, "*", "n", String(i));
  return ((await pipeline.exec()) ?? []).map(([, id]) => String(id));
}

/** Every pending id still has its body: XAUTOCLAIM reports no deleted ids (no ghosts). */
async function expectNoGhosts(stream: string, group: string): Promise<void> {
  const pending = await pendingEntries(fixture.redis, stream, group);
  for (const { id } of pending) {
    expect(await fixture.redis.xrange(stream, id, id), `body of pending ${id}`).toHaveLength(1);
  }
  const claim = (await fixture.redis.call(
    "XAUTOCLAIM",
    stream,
    group,
    "probe",
    0,
    "0-0",
    "COUNT",
    10_000,
    "JUSTID",
  )) as unknown[];
  expect(claim[2]).toEqual([]);
}

describe("trim", () => {
  it("stops at the oldest pending entry of a group the janitor is not configured for, and names it", async () => {
    const stream = uniquePrefix("trim-unconfigured");
    await addEntries(stream, 100);
    // An unconfigured group read everything and still has 3 entries pending in the middle.
    const stuck = await addStuckEntries(fixture.redis, stream, "legacy", numberedBodies(3));
    const tail = await addEntries(stream, 50);
    await fixture.redis.call("XREADGROUP", "GROUP", "legacy", "live", "STREAMS", stream, ">");
    await fixture.redis.xack(stream, "legacy", ...tail);

    const dry = await trim({ stream, maxLen: 10, dryRun: true, pageSize: 30 });
    expect(dry).toMatchObject({ removed: 100, length: 53, dryRun: true });
    expect(await fixture.redis.xlen(stream)).toBe(153);

    const summary = await trim({ stream, maxLen: 10, pageSize: 30 });
    expect(summary).toEqual({
      stream,
      removed: 100,
      length: 53,
      blockedBy: [{ group: "legacy", neededFromId: stuck[0] }],
      floorId: stuck[0],
      dryRun: false,
    });
    const [[first] = [""]] = await fixture.redis.xrange(stream, "-", "+", "COUNT", 1);
    expect(first).toBe(stuck[0]);
    await expectNoGhosts(stream, "legacy");
  });

  it("never removes what a group has not been delivered yet", async () => {
    const stream = uniquePrefix("trim-undelivered");
    const ids = await addEntries(stream, 20);
    await fixture.redis.xgroup("CREATE", stream, "fast", "$");
    await fixture.redis.xgroup("CREATE", stream, "slow", ids[4] ?? "0");
    const summary = await trim({ stream, maxLen: 0 });
    expect(summary.removed).toBe(5);
    expect(summary.blockedBy).toEqual([{ group: "slow", neededFromId: ids[5] }]);
    expect(await fixture.redis.xlen(stream)).toBe(15);
  });

  it("trims to the limit when no group needs the entries, and by age", async () => {
    const stream = uniquePrefix("trim-free");
    const [seconds] = (await fixture.redis.call("TIME")) as [string, string];
    const nowMs = Number(seconds) * 1000;
    for (let i = 0; i < 10; i += 1)
      await fixture.redis.xadd(stream, `${nowMs - 600_000}-${i}`, "old", "1");
    await addEntries(stream, 10);
    await fixture.redis.xgroup("CREATE", stream, "caught-up", "$");
    expect(await trim({ stream, maxAgeMs: 300_000 })).toMatchObject({
      removed: 10,
      length: 10,
      blockedBy: [],
    });
    expect(await trim({ stream, maxLen: 4, pageSize: 3 })).toMatchObject({
      removed: 6,
      length: 4,
      blockedBy: [],
    });
    const noGroups = uniquePrefix("trim-no-groups");
    await addEntries(noGroups, 10);
    expect(await trim({ stream: noGroups, maxLen: 2 })).toMatchObject({
      removed: 8,
      length: 2,
      floorId: "",
    });
  });

  it("does nothing for a missing stream and refuses another type", async () => {
    expect(await trim({ stream: uniquePrefix("trim-missing"), maxLen: 1 })).toMatchObject({
      removed: 0,
      length: 0,
    });
    const key = uniquePrefix("trim-string");
    await fixture.redis.set(key, "x");
    await expect(trim({ stream: key, maxLen: 1 })).rejects.toThrow(/WRONGTYPE/u);
  });

  it("refuses under a fence it does not hold and changes nothing", async () => {
    const stream = uniquePrefix("trim-fenced");
    await addEntries(stream, 5);
    await fixture.redis.set(`${stream}:lease`, "someone-else");
    await expect(
      trim({ stream, maxLen: 1, fence: { key: `${stream}:lease`, value: "me" } }),
    ).rejects.toThrow(/FENCED/u);
    expect(await fixture.redis.xlen(stream)).toBe(5);
  });
});
