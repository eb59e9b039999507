import type { Cluster } from "ioredis";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keySlot } from "../../src/core/keySlot.js";
import { createClusterClient } from "../../src/redis/createClusterClient.js";
import { useRedisCluster } from "../support/redisCluster.js";
import { uniquePrefix } from "../support/redisServer.js";
import { createTestSampler } from "../status/statusHarness.js";
import { caughtUpGroup } from "../support/caughtUpGroup.js";

describe("the status sample while a slot moves (three masters, one replica each)", () => {
  const fixture = useRedisCluster({ replicas: true });
  let redis: Cluster;
  let status: Cluster;
  beforeAll(() => {
    redis = fixture.cluster.client();
    // The daemon's status connection: its slot map is only what it learned before the move.
    status = createClusterClient({
      url: fixture.cluster.seedUrl,
      nodes: fixture.cluster.seedNodes,
      password: "",
      connectionName: "stream-janitor:status",
      commandTimeoutMs: 3000,
      logger: pino({ level: "silent" }),
    });
  });
  afterAll(() => {
    status.disconnect();
  });

  it("a single read meets MOVED for the moved slot (its map entry half updated): the next sample reads every group", async () => {
    const { cluster } = fixture;
    // Two streams on the second master, one on the first (as jobs, shipments and orders were);
    // one of the two moves to the first.
    const [here = "", moving = ""] = cluster.keysOnEveryMaster(uniquePrefix("status-moves"));
    const [, staying = ""] = cluster.keysOnEveryMaster(uniquePrefix("status-stays"));
    const streams = [here, moving, staying];
    const groups = [];
    for (const stream of streams) groups.push(await caughtUpGroup(redis, stream));
    const { sampler, lines } = createTestSampler(status, groups, { window: 3 });
    await sampler.sampleOnce();

    const target = await cluster.ownerOf(here);
    await cluster.migrateSlot(keySlot(moving), target);
    await cluster.waitUntilStable();
    // The lag check's single read (checkLagBacked) on the same connection meets MOVED. Until the
    // slot map refresh it starts comes back, ioredis's map points the slot at the new master with
    // the old one's replica, and (the map shares one array across a range) every other slot of
    // the old master at the new one too: the sample's pipeline for the new master mixed slots of
    // two "allocation groups", and ioredis refused it whole.
    await status.call("XRANGE", moving, "-", "+", "COUNT", 1);
    await sampler.sampleOnce();

    const notSampled = lines.filter((line) => String(line.msg).startsWith("status not sampled"));
    expect(notSampled.map((line) => line.err)).toEqual([]);
    const report = sampler.report();
    for (const stream of streams) {
      const group = report.groups.find((candidate) => candidate.stream === stream);
      expect(group, stream).toMatchObject({ status: "OK", sample: { lag: 0, pending: 1 } });
    }
  });
});
