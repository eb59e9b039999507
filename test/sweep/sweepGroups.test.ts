import { describe, expect, it } from "vitest";
import { sweepAll } from "../../src/sweep/sweepAll.js";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import { addStuckEntries, numberedBodies, pendingEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { captureLogger, groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";

const fixture = useRedisServer();

describe("requeue refusal", () => {
  it("refuses to requeue into a stream other groups read, and the other groups carry on", async () => {
    const shared = uniquePrefix("shared");
    const healthy = uniquePrefix("healthy");
    await addStuckEntries(fixture.redis, shared, "workers", numberedBodies(3));
    await fixture.redis.xgroup("CREATE", shared, "audit", "0");
    await addStuckEntries(fixture.redis, healthy, "workers", numberedBodies(2));

    const [refused, swept] = await sweepAll(
      [groupConfig(shared), groupConfig(healthy)],
      sweepContext(fixture.redis),
      neverAborted,
    );

    expect(refused?.errorKind).toBe("refused");
    expect(refused?.error).toContain(`${shared}/workers`);
    expect(refused?.error).toContain("audit");
    expect(await pendingEntries(fixture.redis, shared, "workers")).toHaveLength(3);
    expect(await fixture.redis.xlen(shared)).toBe(3);
    expect(swept).toMatchObject({ requeued: 2, complete: true });
  });

  it("allows a dedicated requeue stream read by a single group", async () => {
    const stream = uniquePrefix("dedicated");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2));
    await fixture.redis.xgroup("CREATE", stream, "audit", "0");
    await fixture.redis.xgroup("CREATE", `${stream}:retry`, "retry-workers", "$", "MKSTREAM");
    const result = await sweepOnce(
      groupConfig(stream, { requeueStream: `${stream}:retry` }),
      sweepContext(fixture.redis),
      neverAborted,
    );
    expect(result).toMatchObject({ requeued: 2 });
    expect(await fixture.redis.xlen(`${stream}:retry`)).toBe(2);
  });
});

describe("reassign", () => {
  it("moves entries to the most recently active consumer that is not the owner, counting the hand-off as a delivery", async () => {
    const stream = uniquePrefix("reassign");
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(4), {
      consumer: "crashed",
      deliveries: 2,
    });
    // A live consumer: it just took new work (7.0 creates no consumer for an empty read).
    const fresh = await fixture.redis.xadd(stream, "*", "n", "fresh");
    await fixture.redis.call(
      "XREADGROUP",
      "GROUP",
      "workers",
      "alive",
      "COUNT",
      1,
      "STREAMS",
      stream,
      ">",
    );

    const result = await sweepOnce(
      groupConfig(stream, { action: "reassign", minIdleMs: 60_000 }),
      sweepContext(fixture.redis),
      neverAborted,
    );

    expect(result).toMatchObject({ claimed: 4, reassigned: 4, leftPending: 0, requeued: 0 });
    const pending = (await pendingEntries(fixture.redis, stream, "workers")).filter(
      (e) => e.id !== fresh,
    );
    expect(pending.map((e) => [e.id, e.consumer, e.deliveries])).toEqual(
      ids.map((id) => [id, "alive", 3]),
    );
    expect(pending.every((e) => e.idleMs < 60_000)).toBe(true);
    expect(await fixture.redis.xlen(stream)).toBe(5);
  });

  it("leaves entries pending, unchanged, with one warning, when no consumer is alive", async () => {
    const stream = uniquePrefix("no-live");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3), {
      consumer: "crashed",
      deliveries: 2,
    });
    const before = await pendingEntries(fixture.redis, stream, "workers");
    const { logger, lines } = captureLogger();

    const result = await sweepOnce(
      groupConfig(stream, { action: "reassign", minIdleMs: 60_000 }),
      sweepContext(fixture.redis, { logger, batchSize: 1 }),
      neverAborted,
    );

    expect(result).toMatchObject({ claimed: 3, reassigned: 0, leftPending: 3, pages: 3 });
    const after = await pendingEntries(fixture.redis, stream, "workers");
    expect(after.map((e) => [e.id, e.consumer, e.deliveries])).toEqual(
      before.map((e) => [e.id, e.consumer, e.deliveries]),
    );
    expect(after.every((e) => e.idleMs >= 3_600_000)).toBe(true);
    expect(lines.filter((line) => String(line.msg).includes("no live consumer"))).toHaveLength(1);
  });

  it("still dead-letters entries that reached maxDeliveries", async () => {
    const stream = uniquePrefix("reassign-dl");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2), {
      consumer: "crashed",
      deliveries: 5,
    });
    const group = groupConfig(stream, { action: "reassign", maxDeliveries: 5 });
    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
    expect(result).toMatchObject({ claimed: 2, deadLettered: 2, deadLetteredMaxDeliveries: 2 });
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(2);
  });
});

describe("failures stay with their group", () => {
  it("reports a missing stream, a missing group and a wrong-type key next to a healthy group", async () => {
    const prefix = uniquePrefix("broken");
    const healthy = `${prefix}:healthy`;
    await addStuckEntries(fixture.redis, healthy, "workers", numberedBodies(2));
    await fixture.redis.xadd(`${prefix}:nogroup`, "*", "a", "1");
    await fixture.redis.set(`${prefix}:string`, "not a stream");
    const { logger, lines } = captureLogger();

    const results = await sweepAll(
      [
        groupConfig(`${prefix}:missing`),
        groupConfig(`${prefix}:nogroup`),
        groupConfig(`${prefix}:string`),
        groupConfig(healthy),
      ],
      sweepContext(fixture.redis, { logger }),
      neverAborted,
    );

    expect(results.map((r) => r.errorKind)).toEqual([
      "missing-stream",
      "missing-group",
      "wrong-type",
      undefined,
    ]);
    expect(results[0]?.error).toContain(`${prefix}:missing`);
    expect(results[2]?.error).toContain(`${prefix}:string`);
    expect(results[3]).toMatchObject({ requeued: 2, complete: true });
    const errors = lines.filter((line) => line.level === 50);
    expect(errors.map((line) => line.stream)).toEqual([
      `${prefix}:missing`,
      `${prefix}:nogroup`,
      `${prefix}:string`,
    ]);
  });

  it("refuses a dead-letter key of the wrong type without claiming anything", async () => {
    const stream = uniquePrefix("bad-dl");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2));
    const group = groupConfig(stream, { action: "dead-letter" });
    await fixture.redis.set(group.deadLetterStream, "oops");
    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
    expect(result.errorKind).toBe("wrong-type");
    expect((await pendingEntries(fixture.redis, stream, "workers")).map((e) => e.consumer)).toEqual(
      ["crashed-consumer", "crashed-consumer"],
    );
  });

  it("leaves an entry with more fields than one script call can copy pending, and says so", async () => {
    const stream = uniquePrefix("wide");
    const wide = Array.from({ length: 8000 }, (_, i) => `v${i}`);
    const [wideId] = await addStuckEntries(fixture.redis, stream, "workers", [wide, ["n", "1"]]);
    const result = await sweepOnce(groupConfig(stream), sweepContext(fixture.redis), neverAborted);
    expect(result).toMatchObject({ claimed: 1, requeued: 1, oversizedIds: [wideId] });
    expect((await pendingEntries(fixture.redis, stream, "workers")).map((e) => e.id)).toEqual([
      wideId,
    ]);
  });
});
