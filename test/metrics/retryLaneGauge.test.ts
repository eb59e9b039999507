import { describe, expect, it } from "vitest";
import { readGroupSnapshots } from "../../src/scrape/readGroupSnapshots.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { createTestRefresher, gaugeValue } from "./refresherHarness.js";

const fixture = useRedisServer();

describe("stream_janitor_retry_lane_length_entries", () => {
  it("is XLEN of the group's retry lane, under the group's labels; no sample without a lane", async () => {
    const stream = uniquePrefix("lane-gauge");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1));
    await fixture.redis.xgroup("CREATE", stream, "plain", "0");
    const lane = groupConfig(stream, { retryLane: true });
    const plain = groupConfig(stream, { group: "plain" });
    for (let i = 0; i < 3; i += 1) {
      await fixture.redis.xadd(lane.retryLaneStream ?? "", "*", "n", String(i));
    }
    const { refresher, metrics } = createTestRefresher(fixture.redis, [lane, plain]);

    await refresher.refresh();

    const gauge = metrics.retryLaneLengthEntries;
    expect(await gaugeValue(gauge, { stream, group: "workers" })).toBe(3);
    expect(await gaugeValue(gauge, { stream, group: "plain" })).toBeUndefined();
  });

  it("reads the same with the scripted and the pipelined scrape", async () => {
    const stream = uniquePrefix("lane-read");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1));
    const lane = groupConfig(stream, { retryLane: true });
    await fixture.redis.xadd(lane.retryLaneStream ?? "", "*", "n", "1");
    const options = { timeoutMs: 5000, perConsumer: false };
    for (const scripted of [true, false]) {
      const snapshot = await readGroupSnapshots(fixture.redis, [lane], { ...options, scripted });
      const [reading] = snapshot.groups;
      expect(reading?.state === "ok" ? reading.values.retryLaneLength : "not ok").toBe(1);
    }
  });
});
