import { describe, expect, it, vi } from "vitest";
import type { JanitorMetrics } from "../../src/metrics/janitorMetrics.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { HANG_DEADLINE_MS } from "../support/deadlines.js";
import { startRedis, uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { createTestRefresher, gaugeSamples, gaugeValue } from "./refresherHarness.js";

const fixture = useRedisServer();

function groupGauges(metrics: JanitorMetrics) {
  return [
    metrics.pendingEntries,
    metrics.pendingMaxIdleSeconds,
    metrics.pendingOldestAgeSeconds,
    metrics.pendingMaxDeliveries,
    metrics.lagEntries,
    metrics.lagValid,
    metrics.lagSeconds,
    metrics.deadLetterLengthEntries,
  ];
}

/** Every sample of the per-group gauges for one stream. */
async function samplesOf(metrics: JanitorMetrics, stream: string): Promise<unknown[]> {
  const all = await Promise.all(groupGauges(metrics).map((gauge) => gaugeSamples(gauge)));
  return all.flat().filter((sample) => sample.labels.stream === stream);
}

describe("groups that cannot be read", () => {
  it("have no samples, next to a healthy group, and are logged once per change", async () => {
    const healthy = uniquePrefix("healthy");
    const missing = uniquePrefix("missing");
    const noGroup = uniquePrefix("no-group");
    const wrongType = uniquePrefix("wrong-type");
    await addStuckEntries(fixture.redis, healthy, "workers", numberedBodies(3));
    await fixture.redis.xadd(noGroup, "*", "n", "1");
    await fixture.redis.set(wrongType, "not a stream");
    const groups = [healthy, missing, noGroup, wrongType].map((stream) => groupConfig(stream));
    const { refresher, metrics, logLines } = createTestRefresher(fixture.redis, groups);

    await refresher.refresh();
    await refresher.refresh();
    expect(await gaugeValue(metrics.pendingEntries, { stream: healthy })).toBe(3);
    expect(await samplesOf(metrics, healthy)).toHaveLength(groupGauges(metrics).length);
    for (const stream of [missing, noGroup, wrongType]) {
      expect(await samplesOf(metrics, stream)).toEqual([]);
    }
    // The stream without the group still has a length; a missing or mistyped key has none.
    expect(await gaugeValue(metrics.streamLengthEntries, { stream: noGroup })).toBe(1);
    expect(await gaugeValue(metrics.streamLengthEntries, { stream: missing })).toBeUndefined();
    expect(await gaugeValue(metrics.streamLengthEntries, { stream: wrongType })).toBeUndefined();
    expect(await gaugeValue(metrics.redisUp, {})).toBe(1);
    const states = logLines
      .filter((line) => line.msg === "group not readable: its gauges have no samples")
      .map((line) => [line.stream, line.state, line.level]);
    // Warn: a typo in a stream or group name must not hide at debug level.
    expect(states).toEqual([
      [missing, "no-stream", 40],
      [noGroup, "no-group", 40],
      [wrongType, "wrong-type", 40],
    ]);
    expect(await gaugeValue(metrics.groupReadable, { stream: healthy })).toBe(1);
    for (const stream of [missing, noGroup, wrongType]) {
      expect(await gaugeValue(metrics.groupReadable, { stream })).toBe(0);
    }

    // The missing stream appears: its gauges come back; the healthy one goes: its series go.
    await addStuckEntries(fixture.redis, missing, "workers", numberedBodies(2));
    await fixture.redis.del(healthy);
    await refresher.refresh();
    expect(await gaugeValue(metrics.pendingEntries, { stream: missing })).toBe(2);
    expect(await gaugeValue(metrics.groupReadable, { stream: missing })).toBe(1);
    expect(await gaugeValue(metrics.groupReadable, { stream: healthy })).toBe(0);
    expect(await samplesOf(metrics, healthy)).toEqual([]);
    expect(await gaugeValue(metrics.streamLengthEntries, { stream: healthy })).toBeUndefined();
    const changes = logLines.filter((line) => line.stream === missing || line.stream === healthy);
    expect(changes.map((line) => [line.stream, line.state, line.previous, line.level])).toEqual([
      [missing, "no-stream", "unknown", 40],
      [healthy, "no-stream", "ok", 40],
      [missing, "ok", "no-stream", 30],
    ]);
  });

  it("a dead-letter key of the wrong type drops only the dead-letter length", async () => {
    const stream = uniquePrefix("dl-wrong");
    const group = groupConfig(stream);
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1));
    await fixture.redis.set(group.deadLetterStream, "oops");
    const { refresher, metrics } = createTestRefresher(fixture.redis, [group]);
    await refresher.refresh();
    expect(await gaugeValue(metrics.pendingEntries, { stream })).toBe(1);
    expect(await gaugeValue(metrics.deadLetterLengthEntries, { stream })).toBeUndefined();
  });
});

describe("Redis down", () => {
  it("refresh resolves within the timeout, redis_up is 0 and the gauges are dropped", async () => {
    const local = await startRedis();
    try {
      const client = local.client();
      const stream = uniquePrefix("down");
      await addStuckEntries(client, stream, "workers", numberedBodies(5));
      const { refresher, metrics } = createTestRefresher(client, [groupConfig(stream)], {
        perConsumer: true,
        scrapeTimeoutMs: 500,
      });
      await refresher.scanOnce(new AbortController().signal);
      await refresher.refresh();
      expect(await gaugeValue(metrics.redisUp, {})).toBe(1);
      expect(await samplesOf(metrics, stream)).toHaveLength(groupGauges(metrics).length);
      expect(await gaugeValue(metrics.consumerPendingEntries, { stream })).toBe(5);

      metrics.ghostEntries.inc({ stream, group: "workers" }, 2);

      await local.kill();
      const started = performance.now();
      await expect(refresher.refresh()).resolves.toBeUndefined();
      // Resolved, with redis_up 0 below: the deadline only fails a refresh that hangs.
      expect(performance.now() - started).toBeLessThan(HANG_DEADLINE_MS);
      expect(await gaugeValue(metrics.redisUp, {})).toBe(0);
      expect(await samplesOf(metrics, stream)).toEqual([]);
      expect(await gaugeSamples(metrics.streamLengthEntries)).toEqual([]);
      expect(await gaugeSamples(metrics.consumerPendingEntries)).toEqual([]);
      expect(await gaugeSamples(metrics.pelScanTimestampSeconds)).toEqual([]);
      // Unreachable is not unreadable: redis_up says it, group_readable has no sample.
      expect(await gaugeSamples(metrics.groupReadable)).toEqual([]);
      expect(await refresher.ping()).toBe(false);
      // The counters are not the refresher's to drop: they survive an outage.
      expect(await gaugeValue(metrics.ghostEntries, { stream })).toBe(2);

      // A new, empty server: Redis answers again, and the old group is gone from it.
      await local.restart();
      await vi.waitFor(
        async () => {
          await refresher.refresh();
          expect(await gaugeValue(metrics.redisUp, {})).toBe(1);
        },
        { timeout: 10_000, interval: 50 },
      );
      expect(await samplesOf(metrics, stream)).toEqual([]);
      await refresher.stop();
    } finally {
      await local.stop();
    }
  });
});
