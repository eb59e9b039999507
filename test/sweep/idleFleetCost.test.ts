import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { Supervisor } from "../../src/daemon/Supervisor.js";
import type { LeaderTerm } from "../../src/lease/types.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { deadLetterIndexKeys } from "../../src/core/deadLetterIndex.js";
import { parseCommandStats } from "../support/commandStats.js";
import { addStuckEntries, numberedBodies, pendingEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";

const fixture = useRedisServer();

/** A term whose fence Redis holds, as the lease would leave it. */
async function heldTerm(prefix: string): Promise<LeaderTerm> {
  await fixture.redis.set(`${prefix}:lease`, "me");
  return {
    signal: new AbortController().signal,
    fence: { key: `${prefix}:lease`, value: "me" },
    fencingToken: 1,
  };
}

/** The daemon's pass (Supervisor.supervise), over a fixed list of groups. */
function leader(groups: readonly ResolvedGroup[], term: LeaderTerm): Supervisor {
  return new Supervisor({
    groups,
    redis: registerScripts(fixture.redis),
    logger: pino({ level: "silent" }),
    intervalMs: 60_000,
    batchSize: 100,
    maxScriptMs: 2,
    maxEntriesPerGroup: 100_000,
    consumerName: "stream-janitor",
    currentTerm: () => term,
  });
}

/** A stream with `group` whose entries were all delivered and acknowledged: nothing pending. */
async function idleStream(stream: string, groups: readonly string[]): Promise<void> {
  const pipeline = fixture.redis.pipeline();
  for (const group of groups) pipeline.xgroup("CREATE", stream, group, "$", "MKSTREAM");
  for (let n = 0; n < 3; n += 1) pipeline.xadd(stream, "*", "n", String(n));
  for (const group of groups) {
    pipeline.xreadgroup("GROUP", group, "worker", "STREAMS", stream, ">");
  }
  await pipeline.exec();
  for (const group of groups) {
    const pending = (await fixture.redis.xpending(stream, group, "-", "+", 10)) as [string][];
    if (pending.length > 0) await fixture.redis.xack(stream, group, ...pending.map(([id]) => id));
  }
}

/**
 * 200 idle groups on 150 streams: 50 requeue groups, 50 with a retry lane, and 50 streams
 * read by two monitor groups each.
 */
async function idleFleet(prefix: string): Promise<{ groups: ResolvedGroup[]; keys: number }> {
  const groups: ResolvedGroup[] = [];
  for (let i = 0; i < 50; i += 1) {
    const requeue = `${prefix}:requeue:${i}`;
    await idleStream(requeue, ["workers"]);
    groups.push(groupConfig(requeue));
    const laned = `${prefix}:laned:${i}`;
    await idleStream(laned, ["workers"]);
    groups.push(groupConfig(laned, { retryLane: true }));
    const watched = `${prefix}:watched:${i}`;
    await idleStream(watched, ["a", "b"]);
    groups.push(
      groupConfig(watched, { group: "a", action: "monitor" }),
      groupConfig(watched, { group: "b", action: "monitor" }),
    );
  }
  // 150 streams and 50 retry lanes.
  return { groups, keys: 200 };
}

async function commandStats(): Promise<Record<string, { calls: number; usec: number }>> {
  return parseCommandStats(await fixture.redis.info("commandstats"));
}

describe("an idle fleet", () => {
  it("costs no script call and no XINFO STREAM, and XINFO GROUPS at most once per stream", async () => {
    const prefix = uniquePrefix("idle-fleet");
    const { groups, keys } = await idleFleet(prefix);
    const term = await heldTerm(prefix);
    const pass = leader(groups, term);
    // The first pass may set up what each group keeps (its retry lane, its dead-letter index).
    const first = (await pass.supervise(term)) ?? [];
    expect(first.filter((result) => result.error !== undefined)).toEqual([]);

    await fixture.redis.call("CONFIG", "RESETSTAT");
    const results = (await pass.supervise(term)) ?? [];
    const stats = await commandStats();

    expect(results).toHaveLength(200);
    expect(results.filter((result) => result.error !== undefined || !result.complete)).toEqual([]);
    expect({
      scripts: (stats.evalsha?.calls ?? 0) + (stats.eval?.calls ?? 0),
      xinfoStream: stats["xinfo|stream"]?.calls ?? 0,
    }).toEqual({ scripts: 0, xinfoStream: 0 });
    expect(stats["xinfo|groups"]?.calls ?? 0).toBeLessThanOrEqual(keys);
  });

  it("sweeps a group with pending entries among idle ones exactly as before", async () => {
    const prefix = uniquePrefix("idle-one-due");
    const { groups } = await idleFleet(prefix);
    const due = `${prefix}:due`;
    const dueLaned = `${prefix}:due-laned`;
    const ids = await addStuckEntries(fixture.redis, due, "workers", numberedBodies(7));
    await addStuckEntries(fixture.redis, dueLaned, "workers", numberedBodies(3));
    const passed = `${prefix}:passed`;
    await addStuckEntries(fixture.redis, passed, "workers", numberedBodies(2), {
      idleMs: 0,
      deliveries: 9,
    });
    const all = [
      ...groups.slice(0, 100),
      groupConfig(due),
      groupConfig(dueLaned, { retryLane: true }),
      groupConfig(passed),
      ...groups.slice(100),
    ];
    const term = await heldTerm(prefix);

    const results = (await leader(all, term).supervise(term)) ?? [];

    expect(results.map((result) => `${result.stream}/${result.group}`)).toEqual(
      all.map((group) => group.id),
    );
    expect(results[100]).toMatchObject({ requeued: 7, claimed: 7, complete: true });
    expect(results[100]?.requeuedIds).toEqual(ids);
    expect(results[101]).toMatchObject({ requeued: 3, complete: true });
    expect(results[102]).toMatchObject({ deadLettered: 2, complete: true });
    expect(await pendingEntries(fixture.redis, due, "workers")).toEqual([]);
    expect(await fixture.redis.xlen(due)).toBe(14);
    expect(await fixture.redis.xlen(all[101]?.retryLaneStream ?? "")).toBe(3);
    expect(results.filter((result) => result.error !== undefined)).toEqual([]);
  });

  it("follows groups that appear, vanish, change type or lose their lane between passes", async () => {
    const prefix = uniquePrefix("idle-changes");
    const streams = ["stays", "vanishes", "destroyed", "retyped", "laned", "appears"].map(
      (name) => `${prefix}:${name}`,
    );
    const [stays = "", vanishes = "", destroyed = "", retyped = "", laned = "", appears = ""] =
      streams;
    for (const stream of streams.slice(0, 5)) await idleStream(stream, ["workers"]);
    const groups = streams.map((stream) =>
      groupConfig(stream, stream === laned ? { retryLane: true } : {}),
    );
    const lane = groups[4]?.retryLaneStream ?? "";
    const term = await heldTerm(prefix);
    const pass = leader(groups, term);
    const first = (await pass.supervise(term)) ?? [];
    expect(first.map((result) => result.errorKind)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      "missing-stream",
    ]);
    expect(await fixture.redis.exists(lane)).toBe(1);

    await fixture.redis.del(vanishes);
    await fixture.redis.xgroup("DESTROY", destroyed, "workers");
    await fixture.redis.del(retyped);
    await fixture.redis.set(retyped, "not a stream");
    await fixture.redis.del(lane);
    await addStuckEntries(fixture.redis, appears, "workers", numberedBodies(4));
    const second = (await pass.supervise(term)) ?? [];

    expect(second.map((result) => result.errorKind)).toEqual([
      undefined,
      "missing-stream",
      "missing-group",
      "wrong-type",
      undefined,
      undefined,
    ]);
    expect(second[1]?.error).toContain(vanishes);
    expect(second[3]?.error).toContain(retyped);
    expect(second[5]).toMatchObject({ requeued: 4, complete: true });
    // The lane deleted by hand is there again, with its group, before anything is copied to it.
    const laneGroups = (await fixture.redis.call("XINFO", "GROUPS", lane)) as unknown[][];
    expect(laneGroups.map((info) => info[1])).toEqual(["workers"]);
    expect(second[0]).toMatchObject({ stream: stays, complete: true });
  });

  it("ends the pass as fenced when the lease is no longer ours, though nothing is pending", async () => {
    const prefix = uniquePrefix("idle-fenced");
    const { groups } = await idleFleet(prefix);
    const term = await heldTerm(prefix);
    const pass = leader(groups.slice(0, 20), term);
    await pass.supervise(term);
    await fixture.redis.set(`${prefix}:lease`, "someone-else");

    const results = (await pass.supervise(term)) ?? [];

    expect(new Set(results.map((result) => result.errorKind))).toEqual(new Set(["fenced"]));
  });

  it("still refuses an idle requeue group whose stream other groups read", async () => {
    const prefix = uniquePrefix("idle-refused");
    const shared = `${prefix}:shared`;
    await idleStream(shared, ["workers", "audit"]);
    const term = await heldTerm(prefix);
    const pass = leader([groupConfig(shared)], term);
    await pass.supervise(term);

    const [result] = (await pass.supervise(term)) ?? [];

    expect(result?.errorKind).toBe("refused");
    expect(result?.error).toContain("also read by group(s) audit");
  });

  it("trims an idle group's dead-letter index when another group's cap dropped dead letters", async () => {
    // MAXLEN ~ trims whole nodes of the stream: a small node size makes the cap bite at once.
    await fixture.redis.config("SET", "stream-node-max-entries", "4");
    try {
      const stream = uniquePrefix("idle-floor");
      await addStuckEntries(fixture.redis, stream, "billing", numberedBodies(8));
      await addStuckEntries(fixture.redis, stream, "audit", numberedBodies(6));
      const [billing, audit] = ["billing", "audit"].map((group) =>
        groupConfig(stream, { group, action: "dead-letter", deadLetterMaxLen: 4 }),
      );
      if (billing === undefined || audit === undefined) throw new Error("no groups");
      const term = await heldTerm(stream);
      const pass = leader([billing, audit], term);
      await pass.supervise(term);
      const left = await fixture.redis.xrange(billing.deadLetterStream, "-", "+");
      const count = (group: string) => left.filter(([, fields]) => fields.includes(group)).length;
      expect(left.length).toBeLessThan(14);

      // Nothing pending any more: the pass still trims what the cap dropped from both indexes.
      await pass.supervise(term);

      const indexed = await Promise.all(
        [billing, audit].map((group) => fixture.redis.xlen(deadLetterIndexKeys(group).index)),
      );
      expect(indexed).toEqual([count("billing"), count("audit")]);
    } finally {
      await fixture.redis.config("SET", "stream-node-max-entries", "100");
    }
  });
});
