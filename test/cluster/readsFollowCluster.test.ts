import type { Cluster } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClusterClient } from "../../src/redis/createClusterClient.js";
import { keySlot } from "../../src/core/keySlot.js";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { useRedisCluster, type ClusterNode } from "../support/redisCluster.js";
import { uniquePrefix } from "../support/redisServer.js";
import { scanGroupPel } from "../../src/scrape/scanGroupPel.js";
import { waitFor } from "../support/waitFor.js";
import { createTestSampler, type TestSampler } from "../status/statusHarness.js";
import {
  createTestRefresher,
  gaugeValue,
  type TestRefresher,
} from "../metrics/refresherHarness.js";
import { caughtUpGroup } from "../support/caughtUpGroup.js";

describe("reads follow the cluster after a failover or a reshard (three masters, one replica each)", () => {
  const fixture = useRedisCluster({ replicas: true });
  let redis: Cluster;
  let janitor: Cluster;
  beforeAll(() => {
    redis = fixture.cluster.client();
    // The daemon's own client: its slot map is only what it learned before the change.
    janitor = createClusterClient({
      url: fixture.cluster.seedUrl,
      nodes: fixture.cluster.seedNodes,
      password: "",
      connectionName: "stream-janitor:reads",
      commandTimeoutMs: 2000,
      logger: pino({ level: "silent" }),
    });
  });
  afterAll(() => {
    janitor.disconnect();
  });

  /** One scrape and one status sample, as each replica takes them every interval. */
  async function readOnce(scrape: TestRefresher, status: TestSampler, stream: string) {
    // The PEL scan (due entries) first: the scrape exports what it found.
    await scrape.refresher.scanOnce(new AbortController().signal);
    await scrape.refresher.refresh();
    await status.sampler.sampleOnce();
    const labels = { stream, group: "workers" };
    return {
      readable: await gaugeValue(scrape.metrics.groupReadable, labels),
      pending: await gaugeValue(scrape.metrics.pendingEntries, labels),
      lag: await gaugeValue(scrape.metrics.lagEntries, labels),
      due: await gaugeValue(scrape.metrics.pendingDueEntries, labels),
      status: status.sampler.report().groups.find((group) => group.stream === stream),
    };
  }

  const healthy = {
    readable: 1,
    pending: 1,
    lag: 0,
    due: 0,
    status: { status: "OK", sample: { lag: 0, pending: 1 } },
  };

  /** A node that is a master now (the first test's failover changed which nodes are). */
  async function anotherMaster(stream: string): Promise<ClusterNode> {
    const source = await fixture.cluster.ownerOf(stream);
    for (const key of fixture.cluster.keysOnEveryMaster(uniquePrefix("elsewhere"))) {
      const owner = await fixture.cluster.ownerOf(key);
      if (owner !== source) return owner;
    }
    throw new Error("no other master");
  }

  async function readers(group: ResolvedGroup) {
    const scrape = createTestRefresher(janitor as never, [group]);
    const status = createTestSampler(janitor, [group], { window: 3 });
    // A verdict needs two samples: the first is taken here, before the change.
    await status.sampler.sampleOnce();
    return { scrape, status };
  }

  it("CLUSTER FAILOVER on the replica of the stream's master: the next scrape and status sample read the new master", async () => {
    const { cluster } = fixture;
    const [stream = ""] = cluster.keysOnEveryMaster(uniquePrefix("failover-reads"));
    const group = await caughtUpGroup(redis, stream);
    const { scrape, status } = await readers(group);
    expect(await readOnce(scrape, status, stream)).toMatchObject(healthy);

    const master = await cluster.ownerOf(stream);
    const replica = cluster.nodes[cluster.nodes.indexOf(master) + cluster.masters.length];
    if (replica === undefined) throw new Error("no replica");
    await replica.client().call("CLUSTER", "FAILOVER");
    await waitFor(async () => (await cluster.ownerOf(stream)) === replica, {
      what: "the replica to own the stream's slot",
    });
    await cluster.waitUntilStable();

    // The PEL scan's first page travels with TIME, as the scrape's reads do.
    const scan = await scanGroupPel(janitor, group, new AbortController().signal);
    expect(scan).toMatchObject({ entries: 1, dueEntries: 0 });
    expect(await readOnce(scrape, status, stream)).toMatchObject(healthy);
    // The MOVED refreshed the client's slot map: the next reads go to the new owner at once.
    expect(janitor.slots[keySlot(stream)]?.[0]).toBe(replica.address);
  });

  it("the stream's slot migrates to another master: the next scrape and status sample read it there", async () => {
    const { cluster } = fixture;
    const [, stream = ""] = cluster.keysOnEveryMaster(uniquePrefix("migrated-reads"));
    const group = await caughtUpGroup(redis, stream);
    const { scrape, status } = await readers(group);
    expect(await readOnce(scrape, status, stream)).toMatchObject(healthy);

    const target = await anotherMaster(stream);
    await cluster.migrateSlot(keySlot(stream), target);
    await cluster.waitUntilStable();
    expect(await cluster.ownerOf(stream)).toBe(target);

    expect(await readOnce(scrape, status, stream)).toMatchObject(healthy);
    expect(janitor.slots[keySlot(stream)]?.[0]).toBe(target.address);
  });

  it("mid-migration (the stream already on the target, the slot still MIGRATING): reads follow ASK", async () => {
    const { cluster } = fixture;
    const [, , stream = ""] = cluster.keysOnEveryMaster(uniquePrefix("asked-reads"));
    const group = await caughtUpGroup(redis, stream);
    const { scrape, status } = await readers(group);
    expect(await readOnce(scrape, status, stream)).toMatchObject(healthy);

    const target = await anotherMaster(stream);
    const migration = await cluster.startMigration(keySlot(stream), target);
    await migration.moveKeys([stream]);
    try {
      expect(await readOnce(scrape, status, stream)).toMatchObject(healthy);
    } finally {
      await migration.finish();
    }
  });
  // Last in the file: the killed master stays down.
  it("kill -9 of the stream's master: once its replica took over, the next scrape and status sample read it", async () => {
    const { cluster } = fixture;
    const [stream = ""] = cluster.keysOnEveryMaster(uniquePrefix("killed-reads"));
    const group = await caughtUpGroup(redis, stream);
    const { scrape, status } = await readers(group);
    expect(await readOnce(scrape, status, stream)).toMatchObject(healthy);

    const master = await cluster.ownerOf(stream);
    expect(await master.client().call("WAIT", 1, 2000)).toBe(1);
    master.process.kill("SIGKILL");
    await waitFor(async () => (await cluster.ownerOf(stream)) !== master, {
      what: "a replica to own the stream's slot",
    });
    await cluster.waitUntilStable();
    // The read that finds the old master gone (no MOVED comes from a dead node)...
    await readOnce(scrape, status, stream);
    // ...and the next one, an interval later, reads the new master.
    expect(await readOnce(scrape, status, stream)).toMatchObject(healthy);
  });
});
