import { describe, expect, it } from "vitest";
import { detectCapabilities } from "../../src/redis/detectCapabilities.js";
import { scanGroupPel } from "../../src/scrape/scanGroupPel.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { waitFor } from "../support/waitFor.js";
import { createTestSampler } from "./statusHarness.js";

const fixture = useRedisServer();

async function redisMs(): Promise<number> {
  const [seconds, micros] = (await fixture.redis.call("TIME")) as [string, string];
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/**
 * The seams between Redis 7.0 and 7.2+ (field-notes "Seams measured"): run on both. What the
 * server reports is asked of it (detectCapabilities), as the daemon does at start-up.
 */
describe("StatusSampler where Redis 7.0 and 7.2+ differ", () => {
  it("a caught-up group polling '>' with one stuck entry is STUCK, not STOP", async () => {
    const stream = uniquePrefix("caught-up");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1), {
      consumer: "c1",
      idleMs: 60_000,
    });
    const group = groupConfig(stream, { minIdleMs: 1000 });
    const test = createTestSampler(fixture.redis, [group], {
      intervalMs: 20,
      window: 3,
      stuckAfterMs: 0,
    });
    const capabilities = await detectCapabilities(fixture.redis);
    test.sampler.setCapabilities(capabilities);
    const start = await redisMs();
    // The consumer keeps polling for new work and gets none. On 7.0 that leaves its XINFO
    // CONSUMERS idle growing; wait (on Redis's clock) until it is past the 60 ms window twice.
    let rounds = 0;
    await waitFor(
      async () => {
        await fixture.redis.call(
          "XREADGROUP",
          "GROUP",
          "workers",
          "c1",
          "COUNT",
          1,
          "STREAMS",
          stream,
          ">",
        );
        await test.sampler.sampleOnce();
        rounds += 1;
        return rounds >= 3 && (await redisMs()) - start > 150;
      },
      { what: "150 ms of Redis time" },
    );
    const report = test.sampler.statusOf(group.id);
    expect(report?.status, report?.reason).toBe("STUCK");
    expect(report?.sample).toMatchObject({ lag: 0, pending: 1, due: 1 });
    const [consumer] = (await fixture.redis.call(
      "XINFO",
      "CONSUMERS",
      stream,
      "workers",
    )) as unknown[][];
    // What makes the two servers differ: 7.0 never saw the empty reads.
    const idle = Number(consumer?.[5]);
    if (capabilities.consumerInactive) expect(idle).toBeLessThan(60);
    else expect(idle).toBeGreaterThanOrEqual(60);
  });

  it("a group created at '$' with 500 entries waiting and no consumer is STOP", async () => {
    const stream = uniquePrefix("dollar");
    for (let i = 0; i < 3; i += 1) await fixture.redis.xadd(stream, "*", "n", String(i));
    await fixture.redis.xgroup("CREATE", stream, "workers", "$");
    const pipeline = fixture.redis.pipeline();
    for (let i = 0; i < 500; i += 1) pipeline.xadd(stream, "*", "n", String(i));
    await pipeline.exec();
    const group = groupConfig(stream);
    const test = createTestSampler(fixture.redis, [group], { window: 3 });
    const capabilities = await detectCapabilities(fixture.redis);
    test.sampler.setCapabilities(capabilities);
    await test.sampler.sampleOnce();
    await test.sampler.sampleOnce();
    const report = test.sampler.statusOf(group.id);
    expect(report?.status, report?.reason).toBe("STOP");
    expect(report?.reason).toMatch(
      /^work waits \(lag (500|unknown but > 0: entries were added after last-delivered id \d+-\d+), 0 due pending\) and the group has no consumer$/u,
    );
    const [info] = (await fixture.redis.call("XINFO", "GROUPS", stream)) as unknown[][];
    const lag = info?.[info.indexOf("lag") + 1];
    // 7.0 reports no lag here (nothing was deleted or trimmed); 7.2+ counts 500.
    expect(report?.sample.lag).toBe(lag === null ? null : 500);
  });
});

describe("StatusSampler: a monitor group's entry delivered past maxDeliveries", () => {
  it("WARN naming the entry (the oldest pending one, or the PEL scan's)", async () => {
    const stream = uniquePrefix("monitor-over");
    const [poison] = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1), {
      consumer: "c1",
      idleMs: 0,
      deliveries: 9,
    });
    const group = groupConfig(stream, { action: "monitor", maxDeliveries: 5 });
    const test = createTestSampler(fixture.redis, [group], { window: 3 });
    await test.sampler.sampleOnce();
    await test.sampler.sampleOnce();
    const report = test.sampler.statusOf(group.id);
    expect(report?.status, report?.reason).toBe("WARN");
    expect(report?.reason).toMatch(
      new RegExp(`^entry ${poison} delivered 9 times, maxDeliveries 5 \\(action monitor`, "u"),
    );
    // The PEL scan names the entry with the most deliveries too.
    const scan = await scanGroupPel(fixture.redis, group, new AbortController().signal);
    expect(scan).toMatchObject({ maxDeliveries: 9, maxDeliveriesId: poison });
    // Another entry, not the oldest, found by the PEL scan.
    test.pelScans.set(group.id, {
      scannedAtMs: 0,
      maxIdleMs: 0,
      maxDeliveries: 12,
      maxDeliveriesId: "1800000000000-7",
      entries: 2,
      dueEntries: 0,
    });
    await test.sampler.sampleOnce();
    expect(test.sampler.statusOf(group.id)?.reason).toMatch(
      /^entry 1800000000000-7 delivered 12 times, maxDeliveries 5 /u,
    );
  });

  it("no such reason for a group that dead-letters (its sweep does), nor within maxDeliveries", async () => {
    const stream = uniquePrefix("requeue-over");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1), {
      consumer: "c1",
      idleMs: 0,
      deliveries: 5,
    });
    const monitor = groupConfig(stream, { action: "monitor", maxDeliveries: 5 });
    const requeue = groupConfig(stream, { group: "workers", maxDeliveries: 2 });
    for (const group of [monitor, requeue]) {
      const test = createTestSampler(fixture.redis, [group], { window: 3 });
      await test.sampler.sampleOnce();
      await test.sampler.sampleOnce();
      expect(test.sampler.statusOf(group.id)?.status).toBe("OK");
    }
  });
});
