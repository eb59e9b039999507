import { describe, expect, it } from "vitest";
import { judgeGroup } from "../../src/status/judgeGroup.js";
import type { ReadableSample } from "../../src/status/StatusSample.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { createTestSampler } from "./statusHarness.js";

const fixture = useRedisServer();

/**
 * The source is read and acknowledged, and its consumer is gone (deleted): nothing waits there.
 * The lane holds 3 copies that nobody reads.
 */
async function laneNobodyReads(name: string) {
  const stream = uniquePrefix(name);
  const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2));
  await fixture.redis.xack(stream, "workers", ...ids);
  await fixture.redis.xgroup("DELCONSUMER", stream, "workers", "crashed-consumer");
  const group = groupConfig(stream, { retryLane: true, minIdleMs: 60_000 });
  const lane = group.retryLaneStream ?? "";
  await fixture.redis.xgroup("CREATE", lane, "workers", "0", "MKSTREAM");
  for (let i = 0; i < 3; i += 1) await fixture.redis.xadd(lane, "*", "n", String(i));
  return { stream, group, lane };
}

describe("a group's retry lane counts in its status", () => {
  it("STOP when the lane's work waits and no consumer reads, with lane lag and pending in the sample", async () => {
    const { group } = await laneNobodyReads("lane-stop");
    const test = createTestSampler(fixture.redis, [group], { window: 3 });

    await test.sampler.sampleOnce();
    await test.sampler.sampleOnce();

    const report = test.sampler.statusOf(group.id);
    expect(report?.sample).toMatchObject({
      lag: 0,
      retryLane: 3,
      retryLaneLag: 3,
      retryLanePending: 0,
    });
    expect(report?.status).toBe("STOP");
    expect(report?.reason).toContain("retry lane lag 3");
  });

  it("judgeGroup: lane work alone, no consumer seen, is STOP; with a consumer reading it is not", () => {
    const sample = (s: number, overrides: Partial<ReadableSample> = {}): ReadableSample => ({
      readable: true,
      atMs: 1_700_000_000_000 + s * 1000,
      lag: 0,
      pending: 0,
      due: 0,
      oldestPendingIdleMs: 0,
      deadLetters: 0,
      retryLane: 5,
      retryLaneLag: 2,
      retryLanePending: 3,
      retryLaneDue: 1,
      lastDeliveredId: "1000-0",
      entriesRead: 100,
      consumerCount: 1,
      minConsumerIdleMs: 120_000,
      ...overrides,
    });
    const settings = { stuckAfterMs: 10_000, seenWithinMs: 30_000 };
    const stopped = judgeGroup([sample(0), sample(10)], settings);
    expect(stopped.status).toBe("STOP");
    expect(stopped.reason).toContain("retry lane lag 2, 1 due");
    const read = judgeGroup(
      [sample(0, { minConsumerIdleMs: 5 }), sample(10, { minConsumerIdleMs: 5 })],
      settings,
    );
    expect(read.status).not.toBe("STOP");
  });
});
