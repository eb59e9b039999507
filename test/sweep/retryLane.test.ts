import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { addStuckEntries, pendingEntries, streamEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";

const fixture = useRedisServer();

/** A source stream read by two groups; `workers` requeues into its retry lane. */
async function sharedSource(
  name: string,
  entries = 1,
): Promise<{
  stream: string;
  group: ResolvedGroup;
  ids: string[];
}> {
  const stream = uniquePrefix(name);
  const bodies = Array.from({ length: entries }, (_, i) => ["n", String(i)]);
  const ids = await addStuckEntries(fixture.redis, stream, "workers", bodies);
  await fixture.redis.xgroup("CREATE", stream, "audit", "0");
  const group = groupConfig(stream, { retryLane: true, maxDeliveries: 3, minIdleMs: 1000 });
  return { stream, group, ids };
}

async function laneGroups(redis: Redis, lane: string): Promise<string[]> {
  const groups = (await redis.call("XINFO", "GROUPS", lane)) as unknown[][];
  return groups.map((flat) => String(flat[flat.indexOf("name") + 1]));
}

/** A consumer of the group reads the lane and crashes: the copy is pending, idle for long. */
async function consumeLaneAndCrash(redis: Redis, lane: string): Promise<void> {
  const read = (await redis.call(
    "XREADGROUP",
    "GROUP",
    "workers",
    "crashed-consumer",
    "STREAMS",
    lane,
    ">",
  )) as [string, [string, string[]][]][] | null;
  const ids = (read?.[0]?.[1] ?? []).map(([id]) => id);
  if (ids.length > 0) {
    await redis.call(
      "XCLAIM",
      lane,
      "workers",
      "crashed-consumer",
      0,
      ...ids,
      "IDLE",
      3_600_000,
      "JUSTID",
    );
  }
}

describe("retry lane: creation and refusal", () => {
  it("creates the lane with a group of the same name at the first sweep and requeues into it", async () => {
    const { stream, group, ids } = await sharedSource("lane-create", 2);
    const lane = `{${stream}}:workers:retry`;
    expect(group.retryLaneStream).toBe(lane);

    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);

    expect(result).toMatchObject({ claimed: 2, requeued: 2, complete: true });
    expect(result.error).toBeUndefined();
    expect(await laneGroups(fixture.redis, lane)).toEqual(["workers"]);
    const copies = await streamEntries(fixture.redis, lane);
    expect(copies.map((c) => c.fields.get("x-original-id"))).toEqual(ids);
    // Never copied into the shared source: the other group sees nothing new.
    expect(await fixture.redis.xlen(stream)).toBe(2);
    expect(await pendingEntries(fixture.redis, stream, "workers")).toEqual([]);
  });

  it("creates the group at id 0: copies added before the group existed are delivered", async () => {
    const { stream, group } = await sharedSource("lane-early");
    const lane = group.retryLaneStream ?? "";
    await fixture.redis.xadd(lane, "*", "early", "copy");

    await sweepOnce(group, sweepContext(fixture.redis), neverAborted);

    const read = (await fixture.redis.call(
      "XREADGROUP",
      "GROUP",
      "workers",
      "c1",
      "STREAMS",
      lane,
      ">",
    )) as [string, [string, string[]][]][];
    expect(read[0]?.[1].map(([, fields]) => fields[0])).toEqual(["early", "n"]);
    expect(await fixture.redis.xlen(stream)).toBe(1);
  });

  it("creates the lane again after a DEL, even with nothing to requeue", async () => {
    const { group } = await sharedSource("lane-del");
    const lane = group.retryLaneStream ?? "";
    await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
    await fixture.redis.del(lane);

    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);

    expect(result.error).toBeUndefined();
    expect(await laneGroups(fixture.redis, lane)).toEqual(["workers"]);
  });

  it("refuses a lane that another group reads, changing nothing", async () => {
    const { stream, group } = await sharedSource("lane-intruder");
    const lane = group.retryLaneStream ?? "";
    await fixture.redis.xgroup("CREATE", lane, "intruder", "0", "MKSTREAM");

    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);

    expect(result.errorKind).toBe("refused");
    expect(result.error).toContain(lane);
    expect(result.error).toContain("intruder");
    expect(await laneGroups(fixture.redis, lane)).toEqual(["intruder"]);
    expect(await pendingEntries(fixture.redis, stream, "workers")).toHaveLength(1);
  });

  it("changes nothing when the lane's key holds something else than a stream", async () => {
    const { stream, group } = await sharedSource("lane-wrongtype");
    await fixture.redis.set(group.retryLaneStream ?? "", "not a stream");

    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);

    expect(result.errorKind).toBe("wrong-type");
    expect(result.claimed).toBe(0);
    expect(await pendingEntries(fixture.redis, stream, "workers")).toHaveLength(1);
    expect(await fixture.redis.get(group.retryLaneStream ?? "")).toBe("not a stream");
  });

  it("creates nothing when the fence refuses (the lease is not ours)", async () => {
    const { stream, group } = await sharedSource("lane-fenced");
    await fixture.redis.set(`${stream}:lease`, "someone-else");
    const fence = { key: `${stream}:lease`, value: "me" };

    const result = await sweepOnce(group, sweepContext(fixture.redis, { fence }), neverAborted);

    expect(result.errorKind).toBe("fenced");
    expect(await fixture.redis.exists(group.retryLaneStream ?? "")).toBe(0);
    expect(await pendingEntries(fixture.redis, stream, "workers")).toHaveLength(1);
  });

  it("names retryLane: true as the fix when a shared requeue target is refused", async () => {
    const { group } = await sharedSource("lane-advice");
    const result = await sweepOnce(
      { ...group, retryLane: false, retryLaneStream: undefined, requeueStream: group.stream },
      sweepContext(fixture.redis),
      neverAborted,
    );
    expect(result.errorKind).toBe("refused");
    expect(result.error).toContain("give the group its own requeueStream or use action reassign");
    expect(result.error).toContain("retryLane: true");
  });
});

describe("retry lane: swept as part of the group", () => {
  it("a poison entry goes source -> lane -> lane -> the group's dead-letter stream", async () => {
    const { stream, group, ids } = await sharedSource("lane-poison");
    const lane = group.retryLaneStream ?? "";
    const context = sweepContext(fixture.redis);

    const first = await sweepOnce(group, context, neverAborted);
    expect(first).toMatchObject({ claimed: 1, requeued: 1, deadLettered: 0 });
    await consumeLaneAndCrash(fixture.redis, lane);

    const second = await sweepOnce(group, context, neverAborted);
    expect(second).toMatchObject({ claimed: 1, requeued: 1, deadLettered: 0, complete: true });
    const copies = await streamEntries(fixture.redis, lane);
    expect(copies.map((c) => c.fields.get("x-delivery-count"))).toEqual(["1", "2"]);
    expect(copies.map((c) => c.fields.get("x-original-id"))).toEqual([ids[0], ids[0]]);
    expect(await pendingEntries(fixture.redis, lane, "workers")).toEqual([]);
    await consumeLaneAndCrash(fixture.redis, lane);

    const third = await sweepOnce(group, context, neverAborted);
    expect(third).toMatchObject({ claimed: 1, requeued: 0, deadLettered: 1 });
    expect(third.deadLetteredMaxDeliveries).toBe(1);
    const [dead, ...more] = await streamEntries(fixture.redis, group.deadLetterStream);
    expect(more).toEqual([]);
    expect(dead?.raw.slice(0, 2)).toEqual(["n", "0"]);
    expect(Object.fromEntries(dead?.fields ?? [])).toMatchObject({
      "x-original-id": ids[0],
      "x-original-stream": stream,
      "x-original-group": "workers",
      "x-delivery-count": "3",
      "x-dead-letter-reason": "max-deliveries",
      "x-last-consumer": "crashed-consumer",
    });
    expect(group.deadLetterStream).toBe(`{${stream}}:dead`);
    expect(await pendingEntries(fixture.redis, lane, "workers")).toEqual([]);
    expect(await fixture.redis.xlen(lane)).toBe(2);

    // The source never received a copy; the other group reads the one original, once.
    expect(await fixture.redis.xlen(stream)).toBe(1);
    const audit = (await fixture.redis.call(
      "XREADGROUP",
      "GROUP",
      "audit",
      "a1",
      "STREAMS",
      stream,
      ">",
    )) as [string, [string, string[]][]][];
    expect(audit[0]?.[1].map(([id]) => id)).toEqual(ids);
  });

  it("consumers read the source and the lane in one XREADGROUP, as the README shows", async () => {
    const { stream, group } = await sharedSource("lane-read-both");
    const lane = group.retryLaneStream ?? "";
    await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
    const fresh = await fixture.redis.xadd(stream, "*", "n", "fresh");

    const reply = (await fixture.redis.xreadgroup(
      "GROUP",
      "workers",
      "c1",
      "COUNT",
      100,
      "STREAMS",
      stream,
      lane,
      ">",
      ">",
    )) as [string, [string, string[]][]][];

    expect(reply.map(([key, entries]) => [key, entries.map(([, f]) => f[1])])).toEqual([
      [stream, ["fresh"]],
      [lane, ["0"]],
    ]);
    expect(reply[0]?.[1][0]?.[0]).toBe(fresh);
  });

  it("leaves lane entries that are not idle long enough alone", async () => {
    const { group } = await sharedSource("lane-fresh");
    const lane = group.retryLaneStream ?? "";
    const context = sweepContext(fixture.redis);
    await sweepOnce(group, context, neverAborted);
    await fixture.redis.call("XREADGROUP", "GROUP", "workers", "busy", "STREAMS", lane, ">");

    const result = await sweepOnce(group, context, neverAborted);

    expect(result).toMatchObject({ claimed: 0, requeued: 0, complete: true });
    expect(await pendingEntries(fixture.redis, lane, "workers")).toHaveLength(1);
  });
});
