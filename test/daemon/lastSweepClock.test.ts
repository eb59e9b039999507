import { describe, expect, it, vi } from "vitest";
import { GroupSet } from "../../src/core/GroupSet.js";
import type { LeaderTerm } from "../../src/lease/types.js";
import { redisNowMs } from "../../src/redis/redisNowMs.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { useSweepWork } from "./janitorHarness.js";

const fixture = useRedisServer();
const sweepWork = useSweepWork(fixture);

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
    // The host's clock 10 minutes behind the server's (the supervisor reads Date.now).
    const hostNow = Date.now.bind(Date);
    const behind = vi.spyOn(Date, "now").mockImplementation(() => hostNow() - 600_000);
    const { supervisor, metrics } = sweepWork(prefix, new GroupSet([groupConfig(stream)]));
    const before = await redisNowMs(fixture.redis);
    await supervisor.supervise(term);
    const after = await redisNowMs(fixture.redis);
    behind.mockRestore();
    const family = await metrics.lastSweepSuccessTimestampSeconds.get();
    const seconds = family.values.find((v) => v.labels.stream === stream)?.value ?? 0;
    expect(seconds * 1000).toBeGreaterThanOrEqual(before - 1000);
    expect(seconds * 1000).toBeLessThanOrEqual(after + 1000);
    await supervisor.stop();
  });
});
