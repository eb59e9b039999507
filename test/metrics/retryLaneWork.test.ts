import { describe, expect, it } from "vitest";
import { readGroupSnapshots } from "../../src/scrape/readGroupSnapshots.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { laneWithWork } from "../support/retryLaneFixture.js";
import { groupConfig } from "../support/sweepHarness.js";
import { createTestRefresher, gaugeValue } from "./refresherHarness.js";

const fixture = useRedisServer();

describe("retry lane work is exported under the group's labels", () => {
  it("lane pending and lane lag, counted in backlog_entries (source lag + due + lane lag + lane due)", async () => {
    const { stream, group } = await laneWithWork(fixture.redis, "lane-work", 6, 60_000);
    const { refresher, metrics } = createTestRefresher(fixture.redis, [group]);

    await refresher.refresh();

    const labels = { stream, group: "workers" };
    expect(await gaugeValue(metrics.retryLanePendingEntries, labels)).toBe(3);
    expect(await gaugeValue(metrics.retryLaneLagEntries, labels)).toBe(3);
    expect(await gaugeValue(metrics.retryLaneLengthEntries, labels)).toBe(6);
    expect(await gaugeValue(metrics.lagEntries, labels)).toBe(0);
    expect(await gaugeValue(metrics.backlogEntries, labels)).toBe(3 + 1);
  });

  it("reads the same with the scripted and the pipelined scrape", async () => {
    const { group } = await laneWithWork(fixture.redis, "lane-work-read", 6, 60_000);
    const options = { timeoutMs: 5000, perConsumer: false };
    for (const scripted of [true, false]) {
      const snapshot = await readGroupSnapshots(fixture.redis, [group], { ...options, scripted });
      const [reading] = snapshot.groups;
      const lane = reading?.state === "ok" ? reading.values.retryLaneGroup : undefined;
      expect({ scripted, ...lane }).toMatchObject({
        scripted,
        pending: 3,
        lag: 3,
        oldestPendingDeliveries: 1,
      });
      expect(lane?.oldestPendingIdleMs).toBeGreaterThanOrEqual(3_600_000);
    }
  });

  it("a lane without its group (destroyed by hand): lane work unknown, no backlog sample, never 0", async () => {
    const { stream, group, lane } = await laneWithWork(
      fixture.redis,
      "lane-work-nogroup",
      6,
      60_000,
    );
    await fixture.redis.xgroup("DESTROY", lane, "workers");
    const { refresher, metrics } = createTestRefresher(fixture.redis, [group]);

    await refresher.refresh();

    const labels = { stream, group: "workers" };
    expect(await gaugeValue(metrics.retryLaneLengthEntries, labels)).toBe(6);
    expect(await gaugeValue(metrics.retryLanePendingEntries, labels)).toBeUndefined();
    expect(await gaugeValue(metrics.retryLaneLagEntries, labels)).toBeUndefined();
    expect(await gaugeValue(metrics.backlogEntries, labels)).toBeUndefined();
    expect(await gaugeValue(metrics.lagEntries, labels)).toBe(0);
  });

  it("a lane not created yet holds no work: 0 pending, lag 0", async () => {
    const stream = uniquePrefix("lane-work-none");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1));
    const group = groupConfig(stream, { retryLane: true, minIdleMs: 3_600_000 * 2 });
    const { refresher, metrics } = createTestRefresher(fixture.redis, [group]);

    await refresher.refresh();

    const labels = { stream, group: "workers" };
    expect(await gaugeValue(metrics.retryLanePendingEntries, labels)).toBe(0);
    expect(await gaugeValue(metrics.retryLaneLagEntries, labels)).toBe(0);
    expect(await gaugeValue(metrics.backlogEntries, labels)).toBe(0);
  });
});
