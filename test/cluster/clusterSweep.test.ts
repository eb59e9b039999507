import type { Cluster } from "ioredis";
import { pino } from "pino";
import { beforeAll, describe, expect, it } from "vitest";
import { Lease } from "../../src/lease/Lease.js";
import { companionKey } from "../../src/lease/LeaseLock.js";
import { createClusterClient } from "../../src/redis/createClusterClient.js";
import type { GroupAction } from "../../src/core/configTypes.js";
import { slotFenceKey } from "../../src/core/fence.js";
import { sweepAll } from "../../src/sweep/sweepAll.js";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { expectExactlyOnce } from "../support/expectExactlyOnce.js";
import { addStuckEntries, numberedBodies, pendingEntries } from "../support/fabricatePel.js";
import { useRedisCluster } from "../support/redisCluster.js";
import { uniquePrefix } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";

const LEASE_KEY = "sj:lease";
const slotFence = (token: number) => ({ key: LEASE_KEY, value: "unused", slotToken: token });

/**
 * Per stream: six entries delivered once and one poison entry delivered five times, all stuck for
 * an hour; one of the six is deleted (a ghost). Returns the ids that must end exactly once.
 */
async function stuckStream(redis: Cluster, group: ResolvedGroup): Promise<string[]> {
  const ids = await addStuckEntries(redis, group.stream, group.group, numberedBodies(6));
  const [poison] = await addStuckEntries(redis, group.stream, group.group, [["poison", "1"]], {
    deliveries: 5,
  });
  const [ghost, ...kept] = ids;
  await redis.xdel(group.stream, ghost ?? "");
  // A consumer seen just now: the live candidate of reassign.
  await redis.call("XGROUP", "CREATECONSUMER", group.stream, group.group, "alive");
  return [...kept, poison ?? ""];
}

describe("sweeps on Redis Cluster (three masters)", () => {
  const fixture = useRedisCluster();
  let redis: Cluster;
  beforeAll(() => {
    redis = fixture.cluster.client();
  });

  it("creates and sweeps retry lanes on every master, fenced in the source's slot", async () => {
    const groups = fixture.cluster
      .keysOnEveryMaster(uniquePrefix("lane"))
      .map((stream) => groupConfig(stream, { retryLane: true, maxDeliveries: 2 }));
    for (const group of groups) {
      await addStuckEntries(redis, group.stream, group.group, numberedBodies(3));
      await redis.xgroup("CREATE", group.stream, "audit", "0");
    }
    const context = sweepContext(redis, { fence: slotFence(11) });

    const first = await sweepAll(groups, context, neverAborted);

    for (const [i, result] of first.entries()) {
      const group = groups[i] as ResolvedGroup;
      const lane = group.retryLaneStream ?? "";
      expect(result.error).toBeUndefined();
      expect(result).toMatchObject({ requeued: 3, complete: true });
      expect(await redis.xlen(lane)).toBe(3);
      expect(await redis.xlen(group.stream)).toBe(3);
      expect(await redis.get(slotFenceKey(group.stream, LEASE_KEY))).toBe("11");
      // The lane's copies, read and left stuck, are dead-lettered at the next sweep (2 deliveries).
      await redis.call("XREADGROUP", "GROUP", group.group, "c", "STREAMS", lane, ">");
      const ids = (await pendingEntries(redis, lane, group.group)).map((entry) => entry.id);
      await redis.call("XCLAIM", lane, group.group, "c", 0, ...ids, "IDLE", 3_600_000, "JUSTID");
    }
    const second = await sweepAll(groups, context, neverAborted);
    for (const [i, result] of second.entries()) {
      const group = groups[i] as ResolvedGroup;
      expect(result).toMatchObject({ claimed: 3, deadLettered: 3 });
      expect(await redis.xlen(group.deadLetterStream)).toBe(3);
    }
  });

  it("sweeps every action on streams of every master: ghosts and dead letters on each node", async () => {
    const actions: GroupAction[] = ["requeue", "reassign", "dead-letter"];
    const groups = actions.flatMap((action) =>
      fixture.cluster
        .keysOnEveryMaster(uniquePrefix(action))
        .map((stream) => groupConfig(stream, { action })),
    );
    const originals = new Map<ResolvedGroup, string[]>();
    for (const group of groups) originals.set(group, await stuckStream(redis, group));

    const results = await sweepAll(
      groups,
      sweepContext(redis, { fence: slotFence(7) }),
      neverAborted,
    );

    const expected: Record<string, object> = {
      requeue: { claimed: 6, requeued: 5, reassigned: 0, deadLettered: 1, ghosts: 1 },
      reassign: { claimed: 6, requeued: 0, reassigned: 5, deadLettered: 1, ghosts: 1 },
      "dead-letter": { claimed: 6, requeued: 0, reassigned: 0, deadLettered: 6, ghosts: 1 },
    };
    for (const [i, result] of results.entries()) {
      const group = groups[i] as ResolvedGroup;
      expect(result.error).toBeUndefined();
      expect(result).toMatchObject(expected[group.action] ?? {});
      const outcome = await expectExactlyOnce(redis, {
        ...group,
        originalIds: originals.get(group) ?? [],
      });
      if (group.action === "reassign") expect(outcome.stillPending).toBe(5);
      expect(outcome.deadLettered).toBe(group.action === "dead-letter" ? 6 : 1);
      // The fence of each stream sits in its slot, on its owner, raised to the token.
      const owner = await fixture.cluster.ownerOf(group.stream);
      expect(await owner.client().get(slotFenceKey(group.stream, LEASE_KEY))).toBe("7");
      expect(await fixture.cluster.ownerOf(group.deadLetterStream)).toBe(owner);
    }
    const owners = await Promise.all(groups.map((g) => fixture.cluster.ownerOf(g.stream)));
    expect(new Set(owners.map((node) => node.port)).size).toBe(3);
  });

  it("a stale fencing token writes nothing to a stream a newer leader has swept", async () => {
    const groups = fixture.cluster
      .keysOnEveryMaster(uniquePrefix("fenced"))
      .map((stream) => groupConfig(stream, { action: "dead-letter" }));
    for (const group of groups) await stuckStream(redis, group);
    // The newer leader (token 12) sweeps the first two streams.
    const newer = await sweepAll(
      groups.slice(0, 2),
      sweepContext(redis, { fence: slotFence(12) }),
      neverAborted,
    );
    expect(newer.map((r) => r.deadLettered)).toEqual([6, 6]);
    // Fresh stuck entries everywhere; then the stale leader (token 11) wakes up.
    const fresh = new Map<ResolvedGroup, string[]>();
    for (const group of groups)
      fresh.set(group, await addStuckEntries(redis, group.stream, group.group, numberedBodies(3)));
    const lengths = await Promise.all(groups.map((g) => redis.xlen(g.stream)));
    const stale = await sweepAll(
      groups.slice(0, 1),
      sweepContext(redis, { fence: slotFence(11) }),
      neverAborted,
    );
    expect(stale[0]).toMatchObject({ errorKind: "fenced", claimed: 0 });
    expect(stale[0]?.error).toMatch(/held by another process/u);
    const second = await sweepAll(
      groups.slice(1, 2),
      sweepContext(redis, { fence: slotFence(11) }),
      neverAborted,
    );
    expect(second[0]?.errorKind).toBe("fenced");
    expect(await Promise.all(groups.map((g) => redis.xlen(g.stream)))).toEqual(lengths);
    // A stream the newer leader has not reached yet still takes the stale page: whole, once.
    const unreached = await sweepAll(
      groups.slice(2),
      sweepContext(redis, { fence: slotFence(11) }),
      neverAborted,
    );
    expect(unreached[0]?.error).toBeUndefined();
    expect(unreached[0]?.deadLettered).toBe(9);
    // The newer leader then sweeps everything; each entry ended in exactly one place.
    const final = await sweepAll(
      groups,
      sweepContext(redis, { fence: slotFence(12) }),
      neverAborted,
    );
    expect(final.map((r) => r.error)).toEqual([undefined, undefined, undefined]);
    expect(final.map((r) => r.deadLettered)).toEqual([3, 3, 0]);
    for (const group of groups)
      await expectExactlyOnce(redis, { ...group, originalIds: fresh.get(group) ?? [] });
  });

  it("refuses, before claiming anything, a group whose keys span two slots (a discovered one)", async () => {
    const [stream] = fixture.cluster.keysOnEveryMaster(uniquePrefix("span"));
    if (stream === undefined) throw new Error("unreachable");
    const group = groupConfig(stream, { requeueStream: `${stream}:retry` });
    await addStuckEntries(redis, stream, group.group, numberedBodies(3));
    const [result] = await sweepAll(
      [group],
      sweepContext(redis, { fence: slotFence(7) }),
      neverAborted,
    );
    expect(result).toMatchObject({ errorKind: "refused", claimed: 0 });
    expect(result?.error).toContain(`"{${stream}}:retry"`);
    expect(await pendingEntries(redis, stream, group.group)).toHaveLength(3);
  });

  it("the lease works on a cluster client and its terms fence per slot", async () => {
    const key = `${uniquePrefix("lease")}:lease`;
    const client = createClusterClient({
      url: fixture.cluster.seedUrl,
      nodes: fixture.cluster.seedNodes,
      password: "",
      connectionName: "stream-janitor:lease",
      commandTimeoutMs: 500,
      logger: pino({ level: "silent" }),
      failFast: true,
    });
    const options = { key, ttlMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 };
    const logger = pino({ level: "silent" });
    const first = new Lease({ redis: client, ...options, logger, fencePerSlot: true });
    const second = new Lease({ redis: client, ...options, logger, fencePerSlot: true });
    try {
      const term = await first.tryAcquireOnce();
      expect(term?.fence).toMatchObject({ key, slotToken: term?.fencingToken });
      expect(await second.tryAcquireOnce()).toBeUndefined();
      await first.stop();
      const next = await second.tryAcquireOnce();
      expect(next?.fencingToken).toBe((term?.fencingToken ?? 0) + 1);
      expect(await redis.get(companionKey(key, "token"))).toBe(String(next?.fencingToken));
    } finally {
      await first.stop();
      await second.stop();
      client.disconnect();
    }
  });
});
