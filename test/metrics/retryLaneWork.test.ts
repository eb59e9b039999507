import { describe, expect, it } from "vitest";
import { readGroupSnapshots } from "../../src/scrape/readGroupSnapshots.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { createTestRefresher, gaugeValue } from "./refresherHarness.js";

const fixture = useRedisServer();

/**
 * A source the group has read and acknowledged (lag 0, nothing pending), and a lane of 6 copies:
 * 3 delivered and pending (one of them idle for an hour: due), 3 not delivered yet.
 */
async function laneWithWork(name: string) {
  const stream = uniquePrefix(name);
  const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2));
  await fixture.redis.xack(stream, "workers", ...ids);
  const group = groupConfig(stream, { retryLane: true, minIdleMs: 60_000 });
  const lane = group.retryLaneStream ?? "";
  await fixture.redis.xgroup("CREATE", lane, "workers", "0", "MKSTREAM");
  for (let i = 0; i < 6; i += 1) await fixture.redis.xadd(lane, "*", "n", String(i));
  const read = (await fixture.redis.call(
    "XREADGROUP",
    "GROUP",
    "workers",
    "c1",
    "COUNT",
    3,
    "STREAMS",
    lane,
    ">",
  )) as [string, [string, string[]][]][];
  const first = read[0]?.[1][0]?.[0] ?? "";
  await fixture.redis.call("XCLAIM", lane, "workers", "c1", 0, first, "IDLE", 3_600_000, "JUSTID");
  return { stream, group, lane };
}

describe("retry lane work is exported under the group's labels", () => {
  it("lane pending and lane lag, counted in backlog_entries (source lag + due + lane lag + lane due)", async () => {
    const { stream, group } = await laneWithWork("lane-work");
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
    const { group } = await laneWithWork("lane-work-read");
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
    const { stream, group, lane } = await laneWithWork("lane-work-nogroup");
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
