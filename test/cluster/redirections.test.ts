import type { Cluster, Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClusterClient } from "../../src/redis/createClusterClient.js";
import { keySlot, sameSlotKey } from "../../src/core/keySlot.js";
import { deadLetterIndexKeys } from "../../src/core/deadLetterIndex.js";
import type { GroupSweepResult } from "../../src/sweep/GroupSweepResult.js";
import { carriedCountsKey, type ResolvedGroup } from "../../src/core/resolveGroup.js";
import { sweepOnce, type SweepContext } from "../../src/sweep/sweepOnce.js";
import { expectExactlyOnce } from "../support/expectExactlyOnce.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { useRedisCluster, type ClusterNode } from "../support/redisCluster.js";
import { uniquePrefix } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";
import { waitFor } from "../support/waitFor.js";

const slotFence = { key: "sj:lease", value: "unused", slotToken: 1 };

/** How many times `node` answered with this error (INFO errorstats). */
async function errorCount(node: ClusterNode, prefix: string): Promise<number> {
  const text = String(await node.client().call("INFO", "errorstats"));
  return Number(new RegExp(`errorstat_${prefix}:count=(\\d+)`, "u").exec(text)?.[1] ?? 0);
}

function total(results: GroupSweepResult[], field: "claimed" | "requeued" | "deadLettered") {
  return results.reduce((sum, result) => sum + result[field], 0);
}

/** Stuck entries: one poison entry first (so the dead-letter stream exists), then `count` more. */
async function stuckGroup(redis: Cluster, stream: string, count: number) {
  const group = groupConfig(stream, { requeueStream: sameSlotKey(stream, "retry") });
  const poison = await addStuckEntries(redis, stream, group.group, [["poison", "1"]], {
    deliveries: 5,
  });
  const ids = await addStuckEntries(redis, stream, group.group, numberedBodies(count));
  return { group, originalIds: [...poison, ...ids] };
}

async function sweepUntilComplete(
  group: ResolvedGroup,
  context: SweepContext,
  results: GroupSweepResult[],
): Promise<void> {
  await waitFor(
    async () => {
      const result = await sweepOnce(group, context, neverAborted);
      results.push(result);
      return result.complete && result.error === undefined;
    },
    { what: "a complete sweep", timeoutMs: 20_000 },
  );
}

describe("redirections on Redis Cluster (three masters, one replica each)", () => {
  const fixture = useRedisCluster({ replicas: true });
  let redis: Cluster;
  let janitor: Cluster;
  beforeAll(() => {
    redis = fixture.cluster.client();
    janitor = createClusterClient({
      url: fixture.cluster.seedUrl,
      nodes: fixture.cluster.seedNodes,
      password: "",
      connectionName: "stream-janitor:sweep",
      commandTimeoutMs: 2000,
      logger: pino({ level: "silent" }),
    });
  });
  afterAll(() => {
    janitor.disconnect();
  });
  const context = (): SweepContext => ({
    ...sweepContext(janitor, { fence: slotFence, batchSize: 50 }),
    maxEntriesPerGroup: 200,
  });

  it("a slot that migrates mid-sweep (TRYAGAIN, ASK, MOVED): nothing lost, duplicated or counted twice", async () => {
    const { cluster } = fixture;
    const [stream = ""] = cluster.keysOnEveryMaster(uniquePrefix("migrating"));
    const { group, originalIds } = await stuckGroup(redis, stream, 800);
    const sweeping = context();
    const results: GroupSweepResult[] = [];
    results.push(await sweepOnce(group, sweeping, neverAborted));

    const source = await cluster.ownerOf(stream);
    const target = cluster.masters.find((node) => node !== source) as ClusterNode;
    // A page touches ten keys; while a slot migrates Redis runs it (on either side) only when all
    // of them exist there, so the reassign bookkeeping hash is made to exist, as it does for
    // reassign groups. (Without it every page answers TRYAGAIN until the slot has moved.)
    await redis.hset(group.touchesKey, "nobody", "0");
    // Likewise the dead-letter index's floor (written only once deadLetterMaxLen drops dead
    // letters; "0-0" trims nothing). The index and its state exist since the first sweep.
    await redis.set(deadLetterIndexKeys(group).floor, "0-0");
    // And the carried counts of the source's and the requeue stream's copies (started by groups
    // with backoff; once there, kept).
    const carried = [stream, group.requeueStream].map((key) => carriedCountsKey(key, group.group));
    for (const key of carried) await redis.zadd(key, 0, "from:0");
    const migration = await cluster.startMigration(keySlot(stream), target);
    // MIGRATING with every key still on the source: pages run there as before.
    results.push(await sweepOnce(group, sweeping, neverAborted));
    // The stream moves first: the source now lacks one of the page's keys and answers TRYAGAIN,
    // which the client retries until the other keys follow and the source answers ASK.
    await migration.moveKeys([stream]);
    const tryAgainBefore = await errorCount(source, "TRYAGAIN");
    const askBefore = await errorCount(source, "ASK");
    const redirected = sweepOnce(group, sweeping, neverAborted);
    await waitFor(async () => (await errorCount(source, "TRYAGAIN")) > tryAgainBefore, {
      what: "a page refused with TRYAGAIN",
    });
    // Every other key a page declares, the group's dead-letter index keys included.
    const index = deadLetterIndexKeys(group);
    await migration.moveKeys([
      group.requeueStream,
      group.deadLetterStream,
      group.touchesKey,
      sameSlotKey(stream, "sj:lease:fence"),
      index.index,
      index.state,
      index.floor,
      ...carried,
    ]);
    results.push(await redirected);
    expect(await errorCount(source, "ASK")).toBeGreaterThan(askBefore);
    // The slot now belongs to the target: the source answers MOVED, the client follows.
    await migration.finish();
    await sweepUntilComplete(group, sweeping, results);

    expect(results.map((r) => r.error).filter(Boolean)).toEqual([]);
    expect(await cluster.ownerOf(stream)).toBe(target);
    expect(total(results, "claimed")).toBe(801);
    expect(total(results, "requeued")).toBe(800);
    expect(total(results, "deadLettered")).toBe(1);
    await expectExactlyOnce(redis, { ...group, originalIds });
  });

  it("a master failover mid-sweep: the replica takes over, nothing lost, duplicated or counted twice", async () => {
    const { cluster } = fixture;
    const [stream = ""] = cluster.keysOnEveryMaster(uniquePrefix("failover"));
    const { group, originalIds } = await stuckGroup(redis, stream, 600);
    const sweeping = context();
    const results: GroupSweepResult[] = [];
    results.push(await sweepOnce(group, sweeping, neverAborted));
    const master = await cluster.ownerOf(stream);
    // What the master acknowledged has reached its replica (replication is asynchronous).
    const direct: Redis = master.client();
    expect(await direct.call("WAIT", 1, 2000)).toBe(1);
    master.process.kill("SIGKILL");
    // The next pages are sent to the dead master, retried while the replica is promoted.
    await sweepUntilComplete(group, sweeping, results);
    const promoted = await cluster.ownerOf(stream);
    expect(promoted).not.toBe(master);

    expect(total(results, "claimed")).toBe(601);
    expect(total(results, "requeued")).toBe(600);
    await expectExactlyOnce(redis, { ...group, originalIds });
  });
});
