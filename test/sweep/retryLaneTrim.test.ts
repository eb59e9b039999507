import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { Maintenance } from "../../src/maintenance/Maintenance.js";
import { Supervisor } from "../../src/daemon/Supervisor.js";
import { recordSweepEvents } from "../../src/daemon/recordEvents.js";
import type { AdvisoryEvent } from "../../src/events/EventWriter.js";
import type { LeaderTerm } from "../../src/lease/types.js";
import { createMaintenanceMetrics } from "../../src/metrics/maintenanceMetrics.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { runTrimRetryLane } from "../../src/scripts/trimRetryLane.js";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { addStuckEntries, numberedBodies, pendingEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { captureLogger, groupConfig } from "../support/sweepHarness.js";

const fixture = useRedisServer();

/** A leader's pass (sweep, then maintenance) for one group, with its log lines and events. */
async function leaderFor(group: ResolvedGroup) {
  const key = `${group.stream}:lease`;
  await fixture.redis.set(key, "me");
  const term: LeaderTerm = {
    signal: new AbortController().signal,
    fence: { key, value: "me" },
    fencingToken: 1,
  };
  const registry = new Registry();
  const { logger, lines } = captureLogger();
  const maintenance = new Maintenance({
    redis: registerScripts(fixture.redis),
    logger,
    metrics: createMaintenanceMetrics(registry),
    retention: [],
    janitorConsumer: "stream-janitor",
    maxTrimmedPerPass: 100_000,
  });
  const supervisor = new Supervisor({
    groups: [group],
    redis: registerScripts(fixture.redis),
    logger,
    intervalMs: 60_000,
    batchSize: 100,
    maxScriptMs: 2,
    maxEntriesPerGroup: 100_000,
    consumerName: "stream-janitor",
    currentTerm: () => term,
    maintenance,
  });
  const events: AdvisoryEvent[] = [];
  recordSweepEvents(supervisor, { write: (event) => void events.push(event) });
  return { pass: () => supervisor.supervise(term), lines, events, term };
}

/**
 * `count` entries of a source that `audit` reads too, stuck for `workers`: the first pass
 * requeues them all into the lane (the lane's group is created at id 0).
 */
async function laneWithCopies(name: string, count: number) {
  const stream = uniquePrefix(name);
  await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(count));
  await fixture.redis.xgroup("CREATE", stream, "audit", "0");
  const group = groupConfig(stream, { retryLane: true, minIdleMs: 60_000, maxDeliveries: 5 });
  const lane = group.retryLaneStream ?? "";
  const leader = await leaderFor(group);
  await leader.pass();
  expect(await fixture.redis.xlen(lane)).toBe(count);
  return { stream, group, lane, leader };
}

/** A consumer of the group reads `count` copies from the lane: their ids, in lane order. */
async function readLane(lane: string, count: number, consumer = "c1"): Promise<string[]> {
  const reply = (await fixture.redis.call(
    "XREADGROUP",
    "GROUP",
    "workers",
    consumer,
    "COUNT",
    count,
    "STREAMS",
    lane,
    ">",
  )) as [string, [string, string[]][]][] | null;
  return (reply?.[0]?.[1] ?? []).map(([id]) => id);
}

describe("retry lane: the leader trims it to its live work", () => {
  it("removes the copies the group acknowledged, never a pending or an undelivered one", async () => {
    const { lane, leader } = await laneWithCopies("lane-trim", 52);
    const read = await readLane(lane, 50);
    // 47 acknowledged, 3 still pending (one of them between acked ones), 2 never delivered.
    const pending = [read[10], read[48], read[49]] as string[];
    const acked = read.filter((id) => !pending.includes(id));
    await fixture.redis.xack(lane, "workers", ...acked);

    await leader.pass();

    // Nothing before the oldest pending copy is needed any more; from it on everything stays.
    const left = (await fixture.redis.xrange(lane, "-", "+")).map(([id]) => id);
    expect(left[0]).toBe(read[10]);
    expect(left).toHaveLength(52 - 10);
    expect((await pendingEntries(fixture.redis, lane, "workers")).map((e) => e.id)).toEqual(
      pending,
    );

    // Once those are acknowledged too, only the two undelivered copies remain, still readable.
    await fixture.redis.xack(lane, "workers", ...pending);
    await leader.pass();
    expect(await fixture.redis.xlen(lane)).toBe(2);
    expect(await readLane(lane, 10)).toHaveLength(2);
  });

  it("47 copies all acknowledged: the lane is empty after the next pass", async () => {
    const { lane, leader } = await laneWithCopies("lane-trim-all", 47);
    await fixture.redis.xack(lane, "workers", ...(await readLane(lane, 100)));

    await leader.pass();

    expect(await fixture.redis.xlen(lane)).toBe(0);
  });

  it("trims nothing without the lease", async () => {
    const { lane, leader } = await laneWithCopies("lane-trim-fenced", 5);
    await fixture.redis.xack(lane, "workers", ...(await readLane(lane, 100)));
    await fixture.redis.set(leader.term.fence.key, "a newer leader");

    await leader.pass();

    expect(await fixture.redis.xlen(lane)).toBe(5);
  });
});

describe("retry lane trim: bounded calls", () => {
  it("one call removes about pageSize copies at most, and says when there may be more", async () => {
    const stream = uniquePrefix("lane-trim-pages");
    const lane = `{${stream}}:workers:retry`;
    await fixture.redis.xgroup("CREATE", lane, "workers", "0", "MKSTREAM");
    const pipeline = fixture.redis.pipeline();
    for (let i = 0; i < 5000; i += 1) pipeline.xadd(lane, "*", "n", String(i));
    await pipeline.exec();
    const read = await readLane(lane, 5000);
    await fixture.redis.xack(lane, "workers", ...read.slice(0, 4990));
    const redis = registerScripts(fixture.redis);
    const request = { stream, lane, group: "workers", fence: undefined, pageSize: 1000 };

    const first = await runTrimRetryLane(redis, request);
    expect(first.removed).toBeGreaterThan(0);
    expect(first.removed).toBeLessThanOrEqual(1000);
    expect(first.more).toBe(true);
    let calls = 1;
    for (let page = first; page.more; calls += 1) page = await runTrimRetryLane(redis, request);

    expect(calls).toBeGreaterThanOrEqual(5);
    expect(await fixture.redis.xlen(lane)).toBe(10);
    expect((await pendingEntries(fixture.redis, lane, "workers")).map((e) => e.id)).toEqual(
      read.slice(4990),
    );
  });
});

describe("retry lane: its group destroyed by hand", () => {
  it("re-created, it delivers the copies not yet acknowledged and none of the acked ones; warns and writes an event", async () => {
    const { stream, lane, leader } = await laneWithCopies("lane-recreate", 30);
    const read = await readLane(lane, 30);
    const pending = read.slice(27);
    await fixture.redis.xack(lane, "workers", ...read.slice(0, 27));
    await leader.pass();
    await fixture.redis.xgroup("DESTROY", lane, "workers");

    await leader.pass();

    const again = await readLane(lane, 100, "c2");
    expect(again).toEqual(pending);
    const warning = leader.lines.find((line) => line.msg?.toString().includes("re-created"));
    expect(warning).toMatchObject({ level: 40, stream, group: "workers", retryLane: lane });
    expect(leader.events.filter((e) => e.type === "retry-lane-group-recreated")).toEqual([
      expect.objectContaining({ stream, group: "workers", detail: { retryLane: lane } }),
    ]);
  });

  it("creating a lane that did not exist is no re-creation: no warning, no event", async () => {
    const { leader } = await laneWithCopies("lane-first", 2);
    expect(leader.lines.filter((line) => line.msg?.toString().includes("re-created"))).toEqual([]);
    expect(leader.events.filter((e) => e.type === "retry-lane-group-recreated")).toEqual([]);
  });
});
