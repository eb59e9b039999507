import { describe, expect, it } from "vitest";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import { commandCalls } from "../support/commandStats.js";
import { addStuckEntries, numberedBodies, streamEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";

const fixture = useRedisServer();

/**
 * Requeue and dead-letter read a run of idle entries, its first 32 entries first, with one XRANGE
 * over their span when they are next to each other in the stream, without claiming them. When
 * other entries (acknowledged ones) lie in between, the entries that read returned are handled
 * and the call claims as usual from then on. Whichever way, each copy must carry its own
 * original's fields and delivery count, and deleted entries must be reported as ghosts.
 */
async function stuckStream(
  name: string,
  count: number,
): Promise<{ stream: string; ids: string[] }> {
  const stream = uniquePrefix(name);
  const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(count), {
    deliveries: 2,
  });
  return { stream, ids };
}

async function sweepAndCheck(
  stream: string,
  ids: string[],
  gone: { acknowledged: number[]; deleted: number[] },
  action: "requeue" | "dead-letter",
  counted: readonly string[] = [],
) {
  if (gone.acknowledged.length > 0) {
    await fixture.redis.xack(stream, "workers", ...gone.acknowledged.map((i) => ids[i] ?? ""));
  }
  await fixture.redis.xdel(stream, ...gone.deleted.map((i) => ids[i] ?? ""));
  const bodies = new Map((await streamEntries(fixture.redis, stream)).map((e) => [e.id, e.raw]));
  const group = groupConfig(stream, {
    action,
    requeueStream: `${stream}:copies`,
    deadLetterStream: `${stream}:dead`,
  });

  const before = await commandCalls(fixture.redis, counted);
  const result = await sweepOnce(
    group,
    sweepContext(fixture.redis, { batchSize: 1000, maxScriptMs: 1000 }),
    neverAborted,
  );
  const after = await commandCalls(fixture.redis, counted);
  const calls = Object.fromEntries(
    counted.map((name) => [name, (after[name] ?? 0) - (before[name] ?? 0)]),
  );

  const expected = ids.filter(
    (_, i) => !gone.acknowledged.includes(i) && !gone.deleted.includes(i),
  );
  expect(result).toMatchObject({ complete: true, claimed: expected.length });
  expect(result.ghostIds).toEqual(gone.deleted.map((i) => ids[i]));
  const copies = await streamEntries(
    fixture.redis,
    action === "requeue" ? group.requeueStream : group.deadLetterStream,
  );
  expect(copies.map((copy) => copy.fields.get("x-original-id"))).toEqual(expected);
  for (const copy of copies) {
    const original = bodies.get(copy.fields.get("x-original-id") ?? "") ?? [];
    expect(copy.raw.slice(0, original.length)).toEqual(original);
    expect(copy.fields.get("x-delivery-count")).toBe("2");
  }
  expect(await fixture.redis.xpending(stream, "workers")).toEqual([0, null, null, null]);
  return { result, calls };
}

describe("runs of idle entries next to each other in the stream", () => {
  it("requeues an adjacent run with deleted entries inside and at its end", async () => {
    const { stream, ids } = await stuckStream("adjacent", 80);
    await sweepAndCheck(stream, ids, { acknowledged: [], deleted: [0, 10, 33, 79] }, "requeue");
  });

  it("fetches the bodies when acknowledged entries sit among the first 32", async () => {
    const { stream, ids } = await stuckStream("probe", 80);
    await sweepAndCheck(stream, ids, { acknowledged: [5, 6, 50], deleted: [3, 60] }, "requeue");
  });

  it("reads the adjacent part and fetches the rest when an acknowledged entry sits after the first 32", async () => {
    const { stream, ids } = await stuckStream("later", 80);
    await sweepAndCheck(stream, ids, { acknowledged: [41], deleted: [40, 42] }, "dead-letter");
  });

  it("copies interleaved runs (another group's entries between them) exactly", async () => {
    const { stream, ids } = await stuckStream("interleaved", 90);
    const everyThird = ids.map((_, i) => i).filter((i) => i % 3 === 1);
    await sweepAndCheck(stream, ids, { acknowledged: everyThird, deleted: [0, 89] }, "requeue");
  });

  it("reads a crashed consumer's batch in sequence, no body looked up one by one", async () => {
    const { stream, ids } = await stuckStream("batch", 200);
    const gone = { acknowledged: [], deleted: [100] };
    const { result, calls } = await sweepAndCheck(stream, ids, gone, "requeue", COUNTED);
    expect(calls.xclaim).toBe(0);
    // The first RANGE_PROBE entries of a run, then the rest: two reads per window at most.
    expect(calls.xrange).toBeLessThanOrEqual(2 * result.windows);
  });

  it("claims as usual once other consumers' entries lie between the run's", async () => {
    const { stream, ids } = await stuckStream("alternating", 200);
    const gone = { acknowledged: ids.map((_, i) => i).filter((i) => i % 2 === 1), deleted: [2] };
    const { result, calls } = await sweepAndCheck(stream, ids, gone, "dead-letter", COUNTED);
    // Each call finds out with the first RANGE_PROBE entries of its first run (whose bodies that
    // one XRANGE read: no XCLAIM) and claims as usual from then on.
    expect(calls).toEqual({ xclaim: 0, xrange: result.pages });
  });
});

const COUNTED = ["xclaim", "xrange"] as const;

/**
 * Requeue and dead-letter acknowledge each entry in the call that copies it, so they never claim
 * it: the window's XPENDING line gives its owner and delivery count, XRANGE its body, and an id
 * the read does not return is a ghost, acknowledged (removed from the PEL) and reported.
 */
describe("requeue and dead-letter read and acknowledge, without claiming", () => {
  const UNCLAIMED = ["xautoclaim", "xclaim", "xgroup|delconsumer"] as const;

  for (const action of ["requeue", "dead-letter"] as const) {
    it(`${action}: no entry is claimed, deleted ones are reported and leave the PEL`, async () => {
      const { stream, ids } = await stuckStream(`unclaimed-${action}`, 60);
      const gone = { acknowledged: [], deleted: [0, 1, 31, 32, 59] };
      const { calls } = await sweepAndCheck(stream, ids, gone, action, UNCLAIMED);
      expect(calls).toEqual({ xautoclaim: 0, xclaim: 0, "xgroup|delconsumer": 0 });
    });
  }

  it("leaves an oversized entry untouched: same owner and count, nothing claimed nor put back", async () => {
    const stream = uniquePrefix("unclaimed-wide");
    const wide = Array.from({ length: 8000 }, (_, i) => `v${i}`);
    const [wideId] = await addStuckEntries(fixture.redis, stream, "workers", [wide, ["n", "1"]], {
      deliveries: 3,
    });
    const before = await commandCalls(fixture.redis, UNCLAIMED);
    const result = await sweepOnce(groupConfig(stream), sweepContext(fixture.redis), neverAborted);
    const after = await commandCalls(fixture.redis, UNCLAIMED);
    expect(result).toMatchObject({ requeued: 1, oversizedIds: [wideId] });
    expect(UNCLAIMED.map((name) => (after[name] ?? 0) - (before[name] ?? 0))).toEqual([0, 0, 0]);
    const [line] = (await fixture.redis.xpending(stream, "workers", "-", "+", 10)) as [
      string,
      string,
      number,
      number,
    ][];
    expect([line?.[0], line?.[1], line?.[3]]).toEqual([wideId, "crashed-consumer", 3]);
  });
});
