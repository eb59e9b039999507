import { pino } from "pino";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { GroupSet } from "../../src/core/GroupSet.js";
import { Supervisor } from "../../src/daemon/Supervisor.js";
import type { LeaderTerm } from "../../src/lease/types.js";
import { createJanitorMetrics } from "../../src/metrics/janitorMetrics.js";
import { redisNowMs } from "../../src/redis/redisNowMs.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";

const fixture = useRedisServer();
const silent = pino({ level: "silent" });

describe("last sweep success timestamp", () => {
  it("follows Redis TIME, not the host clock: a host 10 min behind reads the Redis time", async () => {
    const prefix = uniquePrefix("last-sweep");
    const stream = `${prefix}:s`;
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3));
    await fixture.redis.set(`${prefix}:lease`, "me");
    const term: LeaderTerm = {
      signal: new AbortController().signal,
      fence: { key: `${prefix}:lease`, value: "me" },
      fencingToken: 1,
    };
    const metrics = createJanitorMetrics(new Registry(), "test");
    const supervisor = new Supervisor({
      groups: new GroupSet([groupConfig(stream)]),
      redis: registerScripts(fixture.redis),
      logger: silent,
      metrics,
      intervalMs: 60_000,
      batchSize: 100,
      maxScriptMs: 2,
      maxEntriesPerGroup: 100_000,
      consumerName: "stream-janitor",
      currentTerm: () => term,
      // The host's clock 10 minutes behind the server's.
      wallClock: () => Date.now() - 600_000,
    });
    const before = await redisNowMs(fixture.redis);
    await supervisor.supervise();
    const after = await redisNowMs(fixture.redis);
    const family = await metrics.lastSweepSuccessTimestampSeconds.get();
    const seconds = family.values.find((v) => v.labels.stream === stream)?.value ?? 0;
    expect(seconds * 1000).toBeGreaterThanOrEqual(before - 1000);
    expect(seconds * 1000).toBeLessThanOrEqual(after + 1000);
    await supervisor.stop();
  });
});
