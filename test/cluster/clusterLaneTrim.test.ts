import type { Cluster } from "ioredis";
import { beforeAll, describe, expect, it } from "vitest";
import { slotFenceKey } from "../../src/core/fence.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { runTrimRetryLane } from "../../src/scripts/trimRetryLane.js";
import { sweepAll } from "../../src/sweep/sweepAll.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { useRedisCluster } from "../support/redisCluster.js";
import { uniquePrefix } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";

const LEASE_KEY = "sj:lease";
const slotFence = (token: number) => ({ key: LEASE_KEY, value: "unused", slotToken: token });

describe("retry lane trim on Redis Cluster", () => {
  const fixture = useRedisCluster();
  let redis: Cluster;
  beforeAll(() => {
    redis = fixture.cluster.client();
  });

  it("trims each lane in its source's slot, under the slot fence; a lower token trims nothing", async () => {
    const groups = fixture.cluster
      .keysOnEveryMaster(uniquePrefix("lane-trim"))
      .map((stream) => groupConfig(stream, { retryLane: true, minIdleMs: 60_000 }));
    for (const group of groups) {
      await addStuckEntries(redis, group.stream, group.group, numberedBodies(4));
      await redis.xgroup("CREATE", group.stream, "audit", "0");
    }
    await sweepAll(groups, sweepContext(redis, { fence: slotFence(11) }), neverAborted);
    const scripted = registerScripts(redis);
    for (const group of groups) {
      const lane = group.retryLaneStream ?? "";
      const reply = (await redis.call(
        "XREADGROUP",
        "GROUP",
        group.group,
        "c",
        "STREAMS",
        lane,
        ">",
      )) as [string, [string, string[]][]][];
      const ids = (reply[0]?.[1] ?? []).map(([id]) => id);
      await redis.xack(lane, group.group, ...ids.slice(0, 3));
      const request = { stream: group.stream, lane, group: group.group, pageSize: 2000 };

      await expect(
        runTrimRetryLane(scripted, { ...request, fence: slotFence(10) }),
      ).rejects.toThrow(/FENCED/u);
      expect(await redis.xlen(lane)).toBe(4);

      const trimmed = await runTrimRetryLane(scripted, { ...request, fence: slotFence(12) });
      expect(trimmed).toEqual({ removed: 3, length: 1, more: false });
      expect(await redis.get(slotFenceKey(group.stream, LEASE_KEY))).toBe("12");
    }
  });
});
