import type { Cluster } from "ioredis";
import { beforeAll, describe, expect, it } from "vitest";
import { useRedisCluster } from "../support/redisCluster.js";
import { uniquePrefix } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { createTestSampler } from "../status/statusHarness.js";

describe("group status on Redis Cluster (three masters)", () => {
  const fixture = useRedisCluster();
  let redis: Cluster;
  beforeAll(() => {
    redis = fixture.cluster.client();
  });

  it("samples every group through one pipeline per node (XINFO CONSUMERS included)", async () => {
    const prefix = uniquePrefix("cluster-status");
    // Streams spread over the masters' slots: each group's reads go to its own node.
    const streams = Array.from({ length: 6 }, (_, i) => `${prefix}:${i}`);
    const owners = await Promise.all(streams.map((stream) => fixture.cluster.ownerOf(stream)));
    expect(new Set(owners.map((node) => node.port)).size).toBeGreaterThan(1);
    const [stopped, healthy, missing, ...rest] = streams as [string, string, string, ...string[]];
    for (const stream of [stopped, healthy, ...rest]) {
      await redis.xgroup("CREATE", stream, "workers", "0", "MKSTREAM");
      await redis.xadd(stream, "*", "n", "1");
    }
    for (const stream of [healthy, ...rest]) {
      await redis.call("XREADGROUP", "GROUP", "workers", "c1", "STREAMS", stream, ">");
      await redis.call("XGROUP", "CREATECONSUMER", stream, "workers", "c2");
    }
    // Work waits but consumers were seen (XINFO CONSUMERS idle, read on the stream's node): STALL.
    const [stalled, ...others] = rest as [string, ...string[]];
    await redis.xadd(stalled, "*", "n", "2");
    const groups = streams.map((stream) => groupConfig(stream));
    const test = createTestSampler(redis, groups, { window: 3 });
    await test.sampler.sampleOnce();
    await test.sampler.sampleOnce();
    const status = (stream: string) =>
      test.sampler.report().groups.find((group) => group.stream === stream);
    expect(status(stopped)).toMatchObject({
      status: "STOP",
      reason: "work waits (lag 1, 0 due pending) and the group has no consumer",
    });
    expect(status(healthy)).toMatchObject({ status: "OK", sample: { lag: 0, pending: 1 } });
    expect(status(missing)?.status).toBe("ERROR");
    expect(status(stalled)?.status).toBe("STALL");
    for (const stream of others) expect(status(stream)?.status).toBe("OK");
    expect(test.sampler.report().redis).toBeUndefined();
  });
});
