import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { GROUP_STATUSES } from "../../src/core/groupStatus.js";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { readGroupSnapshots } from "../../src/scrape/readGroupSnapshots.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { startRedis, uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig, JANITOR_CONSUMER } from "../support/sweepHarness.js";
import { waitFor } from "../support/waitFor.js";
import { createTestSampler, statusSeries, type TestSampler } from "./statusHarness.js";

const fixture = useRedisServer();

async function add(stream: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) await fixture.redis.xadd(stream, "*", "n", String(i));
}

/** A consumer reads `count` new entries (">") and, unless told otherwise, acknowledges them. */
async function consume(stream: string, count: number, ack = true, consumer = "c1"): Promise<void> {
  const reply = (await fixture.redis.call(
    "XREADGROUP",
    "GROUP",
    "workers",
    consumer,
    "COUNT",
    count,
    "STREAMS",
    stream,
    ">",
  )) as [string, [string, string[]][]][] | null;
  const ids = reply?.[0]?.[1].map(([id]) => id) ?? [];
  if (ack && ids.length > 0) await fixture.redis.xack(stream, "workers", ...ids);
}

/** A consumer asks for its own pending history ("0"): a read attempt that never advances. */
async function rereadOwn(stream: string, consumer = "c1"): Promise<void> {
  await fixture.redis.call("XREADGROUP", "GROUP", "workers", consumer, "STREAMS", stream, "0");
}

async function newGroup(name: string, at = "$"): Promise<{ stream: string; group: ResolvedGroup }> {
  const stream = uniquePrefix(name);
  await fixture.redis.xgroup("CREATE", stream, "workers", at, "MKSTREAM");
  return { stream, group: groupConfig(stream) };
}

function statusOf(test: TestSampler, group: ResolvedGroup) {
  const report = test.sampler.statusOf(group.id);
  if (report === undefined) throw new Error("no verdict");
  return report;
}

describe("StatusSampler: each status from a real Redis state", () => {
  it("UNKNOWN after one sample; OK under steady load, with the one-hot metric", async () => {
    const { stream, group } = await newGroup("ok");
    const test = createTestSampler(fixture.redis, [group], { window: 3 });
    for (let round = 0; round < 3; round += 1) {
      await add(stream, 5);
      await consume(stream, 5);
      await test.sampler.sampleOnce();
      if (round === 0) expect(statusOf(test, group).status).toBe("UNKNOWN");
    }
    const report = statusOf(test, group);
    expect(report).toMatchObject({ status: "OK", sample: { lag: 0, pending: 0, due: 0 } });
    const series = await statusSeries(test.registry, stream);
    expect(Object.keys(series).sort()).toEqual([...GROUP_STATUSES].sort());
    expect(Object.entries(series).filter(([, value]) => value === 1)).toEqual([["OK", 1]]);
    // Healthy start-up is no news: nothing logged at warn, no event.
    expect(test.events).toEqual([]);
    expect(test.lines.filter((line) => line.component === "status")).toEqual([]);
  });

  it("STOP: work waits and the group has no consumer", async () => {
    const { stream, group } = await newGroup("stop-none", "0");
    await add(stream, 4);
    const test = createTestSampler(fixture.redis, [group], { window: 3 });
    await test.sampler.sampleOnce();
    await test.sampler.sampleOnce();
    expect(statusOf(test, group)).toMatchObject({
      status: "STOP",
      reason: "work waits (lag 4, 0 due pending) and the group has no consumer",
    });
  });

  it("STOP: a consumer that stops reading (its XINFO CONSUMERS idle passes the window)", async () => {
    const { stream, group } = await newGroup("stop-idle");
    await add(stream, 3);
    // The janitor's own consumer claims too: never counted as a consumer reading.
    await fixture.redis.xgroup("CREATECONSUMER", stream, "workers", JANITOR_CONSUMER);
    const test = createTestSampler(fixture.redis, [group], { intervalMs: 20, window: 3 });
    await consume(stream, 1);
    await add(stream, 5);
    await test.sampler.sampleOnce();
    expect(statusOf(test, group).status).toBe("UNKNOWN");
    // Time passes only as Redis reports it: the consumer's idle grows past 3 x 20 ms.
    const stopped = await waitFor(
      async () => {
        await test.sampler.sampleOnce();
        const report = statusOf(test, group);
        return report.status === "STOP" ? report : undefined;
      },
      { what: "STOP" },
    );
    expect(stopped.reason).toMatch(
      /^work waits \(lag 7, 0 due pending\) and no consumer read in 0\.1s \(1 consumers, latest read attempt [\d.]+s ago\)$/u,
    );
    const [consumer] = (await fixture.redis.call(
      "XINFO",
      "CONSUMERS",
      stream,
      "workers",
    )) as unknown[][];
    expect(Number(consumer?.[5])).toBeGreaterThanOrEqual(60);
  });

  it("STALL: a consumer reads without ever advancing while lag > 0", async () => {
    const { stream, group } = await newGroup("stall", "0");
    await add(stream, 10);
    const test = createTestSampler(fixture.redis, [group], { window: 3 });
    for (let round = 0; round < 3; round += 1) {
      await rereadOwn(stream);
      await test.sampler.sampleOnce();
    }
    const report = statusOf(test, group);
    expect(report.status).toBe("STALL");
    expect(report.reason).toMatch(
      /^lag 10 -> 10 and the read position stayed at (entries-read 0|last-delivered id 0-0) for [\d.]+s while consumers were seen/u,
    );
  });

  it("REWIND: XGROUP SETID backwards", async () => {
    const { stream, group } = await newGroup("rewind", "0");
    await add(stream, 6);
    const test = createTestSampler(fixture.redis, [group], { window: 3 });
    await consume(stream, 6);
    await test.sampler.sampleOnce();
    await fixture.redis.xgroup("SETID", stream, "workers", "0");
    await test.sampler.sampleOnce();
    const report = statusOf(test, group);
    expect(report.status).toBe("REWIND");
    expect(report.reason).toMatch(
      /^last-delivered id moved back from \d+-\d+ to 0-0 \(XGROUP SETID\)/u,
    );
  });

  it("ERROR: a deleted group, and a key of the wrong type; the change is announced", async () => {
    const { stream, group } = await newGroup("error");
    const wrongType = uniquePrefix("error-wrongtype");
    await fixture.redis.set(wrongType, "x");
    const other = groupConfig(wrongType);
    const test = createTestSampler(fixture.redis, [group, other], { window: 3 });
    await consume(stream, 1);
    await test.sampler.sampleOnce();
    await test.sampler.sampleOnce();
    expect(statusOf(test, group).status).toBe("OK");
    expect(statusOf(test, other)).toMatchObject({
      status: "ERROR",
      reason: expect.stringMatching(/^cannot read: WRONGTYPE/u) as string,
      sample: { lag: null, pending: null },
    });
    await fixture.redis.xgroup("DESTROY", stream, "workers");
    await test.sampler.sampleOnce();
    const report = statusOf(test, group);
    expect(report).toMatchObject({
      status: "ERROR",
      reason: `cannot read: no group workers on ${stream}`,
    });
    // First verdict bad: logged, no event. A change: logged once at warn, one event (leader).
    const logged = test.lines.filter((line) => line.component === "status");
    expect(logged.map((line) => [line.stream, line.status, line.previous, line.level])).toEqual([
      [wrongType, "ERROR", null, 40],
      [stream, "ERROR", "OK", 40],
    ]);
    expect(test.events).toEqual([
      {
        type: "status-changed",
        at: report.since,
        stream,
        group: "workers",
        detail: { from: "OK", to: "ERROR", reason: report.reason },
      },
    ]);
    await test.sampler.sampleOnce();
    expect(test.lines.filter((line) => line.component === "status")).toHaveLength(2);
    expect(test.events).toHaveLength(1);
  });

  it("a replica that is not the leader logs the change and writes no event", async () => {
    const { stream, group } = await newGroup("standby");
    const test = createTestSampler(fixture.redis, [group], { window: 3 });
    test.leader.value = false;
    await test.sampler.sampleOnce();
    await test.sampler.sampleOnce();
    await fixture.redis.xgroup("DESTROY", stream, "workers");
    await test.sampler.sampleOnce();
    expect(statusOf(test, group).status).toBe("ERROR");
    expect(test.events).toEqual([]);
    expect(test.lines.filter((line) => line.status === "ERROR")).toHaveLength(1);
    expect(test.sampler.report().leader).toEqual({
      isLeader: false,
      instance: "test-host:1",
      fencingToken: null,
    });
  });

  /** The group's lag as the server reports it, and whether it can be right (not above XLEN). */
  async function serverLag(stream: string): Promise<{ lag: number | null; trusted: boolean }> {
    const [fields = []] = (await fixture.redis.call("XINFO", "GROUPS", stream)) as unknown[][];
    const raw = fields[fields.indexOf("lag") + 1];
    const lag = raw === null || raw === undefined ? null : Number(raw);
    return { lag, trusted: lag !== null && lag <= (await fixture.redis.xlen(stream)) };
  }

  it.each([
    [
      "XDEL of an undelivered entry",
      (s: string, ids: string[]) => fixture.redis.xdel(s, ids[2] ?? ""),
    ],
    ["XTRIM past the group's position", (s: string) => fixture.redis.xtrim(s, "MAXLEN", 3)],
  ])(
    "UNKNOWN when the lag cannot be known after %s (the server asked, not assumed)",
    async (_, cut) => {
      const { stream, group } = await newGroup("unknown-lag", "0");
      await add(stream, 6);
      const ids = (await fixture.redis.xrange(stream, "-", "+")).map(([id]) => id);
      const test = createTestSampler(fixture.redis, [group], { window: 3 });
      await consume(stream, 2);
      await cut(stream, ids);
      await test.sampler.sampleOnce();
      await test.sampler.sampleOnce();
      const reported = await serverLag(stream);
      const report = statusOf(test, group);
      if (reported.trusted) {
        expect(report.sample.lag).toBe(reported.lag);
        expect(report.status).not.toBe("UNKNOWN");
      } else {
        // Redis 7.0: null after the XDEL; 4 (over XLEN 3) after the XTRIM.
        expect(report.sample.lag).toBeNull();
        expect(report.status).toBe("UNKNOWN");
        expect(report.reason).toMatch(/^lag unknown: Redis reports it as null or above/u);
      }
    },
  );

  it("STUCK: the oldest pending entry idles past stuckAfterMs in every sample", async () => {
    const stream = uniquePrefix("stuck");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3), {
      idleMs: 60_000,
    });
    const group = groupConfig(stream, { minIdleMs: 1000 });
    const test = createTestSampler(fixture.redis, [group], { window: 3, stuckAfterMs: 0 });
    for (let round = 0; round < 2; round += 1) {
      // A live consumer polls (nothing new): the group is read, its tail is stuck.
      await consume(stream, 1, true, "c2");
      await test.sampler.sampleOnce();
    }
    const report = statusOf(test, group);
    expect(report.status).toBe("STUCK");
    expect(report.reason).toMatch(/^oldest pending entry idle 60s, past 10s in every sample/u);
    expect(report.sample).toMatchObject({ pending: 3, due: 1, lag: 0 });
    // The PEL scan's count wins over the estimate from the oldest entry.
    test.pelScans.set(group.id, {
      scannedAtMs: 0,
      maxIdleMs: 60_000,
      maxDeliveries: 1,
      entries: 3,
      dueEntries: 3,
    });
    await test.sampler.sampleOnce();
    expect(statusOf(test, group).sample.due).toBe(3);
  });

  it("WARN: consumers read, but lag grows over the window", async () => {
    const { stream, group } = await newGroup("warn", "0");
    const test = createTestSampler(fixture.redis, [group], { window: 3 });
    for (let round = 0; round < 3; round += 1) {
      await add(stream, 10);
      await consume(stream, 5);
      await test.sampler.sampleOnce();
    }
    const report = statusOf(test, group);
    expect(report.status).toBe("WARN");
    expect(report.reason).toMatch(/^lag 15 and growing: 5 -> 15 in [\d.]+s while consumers read/u);
  });

  it("keeps a bounded window and forgets groups that leave (and their series)", async () => {
    const { stream, group } = await newGroup("forget");
    const test = createTestSampler(fixture.redis, [group], { window: 2 });
    for (let round = 0; round < 4; round += 1) await test.sampler.sampleOnce();
    expect(statusOf(test, group).status).toBe("OK");
    test.sampler.setGroups([]);
    expect(test.sampler.statusOf(group.id)).toBeUndefined();
    expect(await statusSeries(test.registry, stream)).toEqual({});
    expect(test.sampler.report().groups).toEqual([]);
  });

  it("serves the contract's report shape", async () => {
    const { stream, group } = await newGroup("shape");
    const test = createTestSampler(fixture.redis, [group], { intervalMs: 5000, window: 4 });
    await test.sampler.sampleOnce();
    await test.sampler.sampleOnce();
    const report = test.sampler.report();
    expect(Object.keys(report)).toEqual(["generatedAt", "leader", "server", "sampling", "groups"]);
    expect(report.generatedAt).toBeGreaterThan(1_700_000_000_000);
    expect(report.leader).toEqual({ isLeader: true, instance: "test-host:1", fencingToken: 7 });
    expect(report.server).toEqual({
      product: null,
      version: null,
      mode: "standalone",
      capabilities: {},
    });
    expect(report.sampling).toEqual({ intervalMs: 5000, window: 4 });
    const [only] = report.groups;
    expect(Object.keys(only ?? {})).toEqual([
      "stream",
      "group",
      "status",
      "reason",
      "since",
      "sample",
    ]);
    expect(only).toMatchObject({ stream, group: "workers", status: "OK" });
    expect(Object.keys(only?.sample ?? {})).toEqual([
      "lag",
      "pending",
      "due",
      "oldestPendingIdleMs",
      "deadLetters",
      "retryLane",
      "lastDeliveredId",
    ]);
    expect(only?.since).toBe(report.generatedAt);
  });
});

describe("StatusSampler: what it reads", () => {
  it("ERROR when the janitor's user may not read the group (NOPERM)", async () => {
    const { stream, group } = await newGroup("noperm");
    const user = uniquePrefix("no-xinfo-consumers");
    await fixture.redis.call(
      "ACL",
      "SETUSER",
      user,
      "on",
      ">pw",
      "~*",
      "+@all",
      "-xinfo|consumers",
    );
    const limited = new Redis({ port: fixture.server.port, username: user, password: "pw" });
    try {
      const test = createTestSampler(limited, [group], { window: 3 });
      await test.sampler.sampleOnce();
      expect(statusOf(test, group)).toMatchObject({
        stream,
        status: "ERROR",
        // Inside a script Redis 7.0 words it "ERR The user executing the script can't run ...".
        reason: expect.stringMatching(/^cannot read: .*(NOPERM|can't run this command)/u) as string,
      });
    } finally {
      limited.disconnect();
    }
  });

  it("samples on its own timer: first round at once, then every intervalMs plus jitter", async () => {
    const { group } = await newGroup("timer");
    const waits: number[] = [];
    let fire: (() => void) | undefined;
    const timers = {
      setTimeout: (callback: () => void, ms: number) => {
        waits.push(ms);
        fire = callback;
        return waits.length;
      },
      clearTimeout: () => {
        fire = undefined;
      },
    };
    const test = createTestSampler(
      fixture.redis,
      [group],
      { intervalMs: 1000 },
      {
        timers,
        random: () => 0.5,
      },
    );
    test.sampler.start();
    expect(waits).toEqual([0]);
    fire?.();
    await waitFor(() => waits.length === 2, { what: "the next round's timer" });
    // withJitter: up to 20 % more, here half of it.
    expect(waits).toEqual([0, 1100]);
    expect(test.sampler.statusOf(group.id)?.status).toBe("UNKNOWN");
    await test.sampler.stop();
    expect(fire).toBeUndefined();
  });

  it("reads the same activity scripted and pipelined (no EVAL, Cluster)", async () => {
    const { stream, group } = await newGroup("paths", "0");
    await add(stream, 5);
    await consume(stream, 2);
    await fixture.redis.xgroup("CREATECONSUMER", stream, "workers", JANITOR_CONSUMER);
    const options = {
      timeoutMs: 2000,
      perConsumer: false,
      consumers: { janitorConsumer: JANITOR_CONSUMER },
    };
    const scripted = await readGroupSnapshots(fixture.redis, [group], options);
    const pipelined = await readGroupSnapshots(fixture.redis, [group], {
      ...options,
      scripted: false,
    });
    const activity = (snapshot: typeof scripted) => {
      const [reading] = snapshot.groups;
      return reading?.state === "ok" ? reading.values.activity : undefined;
    };
    expect(activity(scripted)).toMatchObject({ entriesRead: 2, consumerCount: 1 });
    expect(activity(pipelined)).toMatchObject({ entriesRead: 2, consumerCount: 1 });
    // A scrape does not ask: no XINFO CONSUMERS, no activity.
    const scrape = await readGroupSnapshots(fixture.redis, [group], {
      timeoutMs: 2000,
      perConsumer: false,
    });
    expect(activity(scrape)).toBeUndefined();
  });

  it("keeps the verdicts through a Redis outage and says the report is stale", async () => {
    const server = await startRedis();
    try {
      const redis = server.client();
      const stream = uniquePrefix("outage");
      await redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
      const group = groupConfig(stream);
      const test = createTestSampler(redis, [group], { window: 3 });
      await test.sampler.sampleOnce();
      await test.sampler.sampleOnce();
      const before = test.sampler.report();
      expect(before.groups[0]?.status).toBe("OK");
      await server.kill();
      await test.sampler.sampleOnce();
      const after = test.sampler.report();
      expect(after.redis).toBe("unreachable");
      expect(after.groups).toEqual(before.groups);
      expect(after.generatedAt).toBe(before.generatedAt);
      expect(test.events).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});
