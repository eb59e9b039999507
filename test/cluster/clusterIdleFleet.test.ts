import type { Cluster } from "ioredis";
import { beforeAll, describe, expect, it } from "vitest";
import { slotFenceKey } from "../../src/core/fence.js";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { sweepAll } from "../../src/sweep/sweepAll.js";
import { parseCommandStats } from "../support/commandStats.js";
import { useRedisCluster } from "../support/redisCluster.js";
import { uniquePrefix } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";

const LEASE_KEY = "sj:lease";
const slotFence = (token: number) => ({ key: LEASE_KEY, value: "unused", slotToken: token });

describe("an idle fleet on Redis Cluster (three masters)", () => {
  const fixture = useRedisCluster();
  let redis: Cluster;
  beforeAll(() => {
    redis = fixture.cluster.client();
  });

  /** Script calls on every master since the last reset. */
  async function scriptCalls(): Promise<number> {
    let calls = 0;
    for (const master of fixture.cluster.masters) {
      const stats = parseCommandStats(await master.client().info("commandstats"));
      calls += (stats.evalsha?.calls ?? 0) + (stats.eval?.calls ?? 0);
    }
    return calls;
  }

  it("reads each master's groups without a script once the term's fences are raised", async () => {
    const streams = fixture.cluster.keysOnEveryMaster(uniquePrefix("idle"));
    const groups: ResolvedGroup[] = streams.flatMap((stream) => [
      groupConfig(stream),
      groupConfig(stream, { group: "laned", retryLane: true }),
    ]);
    for (const stream of streams) {
      await redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
      await redis.xgroup("CREATE", stream, "laned", "$");
    }
    // The default requeue target is the source, which another group reads: refused, every pass.
    const requeue = groups.filter((group) => group.group === "workers");
    const laned = groups.filter((group) => group.group === "laned");

    const first = await sweepAll(
      laned,
      sweepContext(redis, { fence: slotFence(31) }),
      neverAborted,
    );
    expect(first.map((result) => result.error)).toEqual(laned.map(() => undefined));
    for (const master of fixture.cluster.masters) await master.client().call("CONFIG", "RESETSTAT");

    const idle = await sweepAll(laned, sweepContext(redis, { fence: slotFence(31) }), neverAborted);
    expect(idle.map((result) => result.complete)).toEqual(laned.map(() => true));
    expect(await scriptCalls()).toBe(0);

    // A new term: each stream's fence is raised by one script call, then idle again.
    const raised = await sweepAll(
      laned,
      sweepContext(redis, { fence: slotFence(32) }),
      neverAborted,
    );
    expect(raised.map((result) => result.error)).toEqual(laned.map(() => undefined));
    expect(await scriptCalls()).toBeGreaterThanOrEqual(streams.length);
    for (const stream of streams)
      expect(await redis.get(slotFenceKey(stream, LEASE_KEY))).toBe("32");

    const refused = await sweepAll(
      requeue,
      sweepContext(redis, { fence: slotFence(32) }),
      neverAborted,
    );
    expect(refused.map((result) => result.errorKind)).toEqual(requeue.map(() => "refused"));
  });
});
