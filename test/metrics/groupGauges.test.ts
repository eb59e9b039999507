import { describe, expect, it } from "vitest";
import { validLag } from "../../src/scrape/applyGroupGauges.js";
import type { GroupValues } from "../../src/scrape/GroupReading.js";
import { addStuckEntries, numberedBodies, pendingEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { createTestRefresher, gaugeValue, redisNowMs } from "./refresherHarness.js";

const fixture = useRedisServer();

const neverAborted = new AbortController().signal;

describe("PEL gauges", () => {
  it("match XPENDING: count exactly, max idle and deliveries exactly as of the scan", async () => {
    const stream = uniquePrefix("pel");
    const labels = { stream, group: "workers" };
    // More than one 1,000-entry page, with the extremes on the second page.
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1500), {
      consumer: "a",
      idleMs: 60_000,
    });
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(10), {
      consumer: "b",
      idleMs: 7_200_000,
      deliveries: 7,
    });
    const { refresher, metrics } = createTestRefresher(fixture.redis, [groupConfig(stream)]);

    await refresher.refresh();
    const [count] = (await fixture.redis.xpending(stream, "workers")) as [number];
    expect(await gaugeValue(metrics.pendingEntries, labels)).toBe(count);
    expect(count).toBe(1510);
    // Before the first scan: the oldest entry's live idle time and count, a lower bound.
    expect(await gaugeValue(metrics.pendingMaxIdleSeconds, labels)).toBeGreaterThanOrEqual(60);
    expect(await gaugeValue(metrics.pendingMaxIdleSeconds, labels)).toBeLessThan(70);
    expect(await gaugeValue(metrics.pendingMaxDeliveries, labels)).toBe(1);
    expect(await gaugeValue(metrics.pelScanTimestampSeconds, labels)).toBeUndefined();

    const before = await redisNowMs(fixture.redis);
    await refresher.scanOnce(neverAborted);
    await refresher.refresh();
    const truth = await pendingEntries(fixture.redis, stream, "workers");
    const trueMaxIdle = Math.max(...truth.map((entry) => entry.idleMs)) / 1000;
    const maxIdle = await gaugeValue(metrics.pendingMaxIdleSeconds, labels);
    expect(maxIdle).toBeGreaterThanOrEqual(7200);
    expect(Math.abs((maxIdle ?? 0) - trueMaxIdle)).toBeLessThan(2);
    expect(await gaugeValue(metrics.pendingMaxDeliveries, labels)).toBe(
      Math.max(...truth.map((entry) => entry.deliveries)),
    );
    const scannedAt = (await gaugeValue(metrics.pelScanTimestampSeconds, labels)) ?? 0;
    expect(scannedAt * 1000).toBeGreaterThanOrEqual(before);
    expect(scannedAt * 1000).toBeLessThanOrEqual(await redisNowMs(fixture.redis));

    // An emptied PEL reads 0 at once, without waiting for the next scan.
    await fixture.redis.xack(stream, "workers", ...truth.map((entry) => entry.id));
    await refresher.refresh();
    expect(await gaugeValue(metrics.pendingEntries, labels)).toBe(0);
    expect(await gaugeValue(metrics.pendingMaxIdleSeconds, labels)).toBe(0);
    expect(await gaugeValue(metrics.pendingMaxDeliveries, labels)).toBe(0);
    expect(await gaugeValue(metrics.pendingOldestAgeSeconds, labels)).toBe(0);
  });

  it("computes ages from ids on the Redis clock, never from an entry", async () => {
    const stream = uniquePrefix("ages");
    const labels = { stream, group: "workers" };
    const now = await redisNowMs(fixture.redis);
    const [t0, t1, t2, t3] = [3_600_000, 1_800_000, 600_000, 60_000].map((ago) => now - ago) as [
      number,
      number,
      number,
      number,
    ];
    for (const t of [t0, t1, t2, t3]) await fixture.redis.xadd(stream, `${t}-0`, "n", String(t));
    await fixture.redis.xgroup("CREATE", stream, "workers", "0");
    await fixture.redis.call(
      "XREADGROUP",
      "GROUP",
      "workers",
      "c",
      "COUNT",
      2,
      "STREAMS",
      stream,
      ">",
    );
    const { refresher, metrics } = createTestRefresher(fixture.redis, [groupConfig(stream)]);
    const ageOf = async (t = 0): Promise<[number, number]> => {
      const low = (await redisNowMs(fixture.redis)) - t;
      await refresher.refresh();
      return [low / 1000, ((await redisNowMs(fixture.redis)) - t) / 1000];
    };

    const [oldLow, oldHigh] = await ageOf(t0);
    const oldest = await gaugeValue(metrics.pendingOldestAgeSeconds, labels);
    expect(oldest).toBeGreaterThanOrEqual(oldLow);
    expect(oldest).toBeLessThanOrEqual(oldHigh);
    // The first undelivered entry (t2) came after the last delivered one (t1): without reading an
    // entry, the age of what waits is bounded by the age of the last-delivered id.
    const [lagLow, lagHigh] = await ageOf(t1);
    const lagSeconds = await gaugeValue(metrics.lagSeconds, labels);
    expect(lagSeconds).toBeGreaterThanOrEqual(lagLow);
    expect(lagSeconds).toBeLessThanOrEqual(lagHigh);
    expect(await gaugeValue(metrics.lagEntries, labels)).toBe(2);
    expect(await gaugeValue(metrics.lagValid, labels)).toBe(1);
    expect(await gaugeValue(metrics.streamLengthEntries, { stream })).toBe(4);

    await fixture.redis.xack(stream, "workers", `${t0}-0`, `${t1}-0`);
    await fixture.redis.xtrim(stream, "MINID", `${t1}-0`);
    await refresher.refresh();
    expect(await gaugeValue(metrics.streamLengthEntries, { stream })).toBe(3);
    expect(await gaugeValue(metrics.lagEntries, labels)).toBe(2);

    // Everything read and acknowledged: nothing waits, and the headroom runs to now.
    await fixture.redis.call(
      "XREADGROUP",
      "GROUP",
      "workers",
      "c",
      "COUNT",
      9,
      "STREAMS",
      stream,
      ">",
    );
    await fixture.redis.xack(stream, "workers", `${t2}-0`, `${t3}-0`);
    await refresher.refresh();
    expect(await gaugeValue(metrics.lagSeconds, labels)).toBe(0);
    expect(await gaugeValue(metrics.lagEntries, labels)).toBe(0);
  });

  it("treats a lag above the stream's length as unknown (trimmed past the group, Redis < 8)", async () => {
    const stream = uniquePrefix("lag-over");
    const labels = { stream, group: "workers" };
    for (let i = 1; i <= 10; i += 1) await fixture.redis.xadd(stream, `${i}-0`, "n", String(i));
    await fixture.redis.xgroup("CREATE", stream, "workers", "0");
    await fixture.redis.call(
      "XREADGROUP",
      "GROUP",
      "workers",
      "c",
      "COUNT",
      3,
      "STREAMS",
      stream,
      ">",
    );
    const { refresher, metrics } = createTestRefresher(fixture.redis, [groupConfig(stream)]);
    await refresher.refresh();
    expect(await gaugeValue(metrics.lagEntries, labels)).toBe(7);
    expect(await gaugeValue(metrics.lagValid, labels)).toBe(1);

    // Trimming past the last-delivered id leaves 4 entries, all undelivered. Redis < 8.0 (and
    // Valkey 8.0) still says 7, 8.0 fixed it: the reply is read first, so the test shows which
    // server it met before the janitor's answer (both answers: validLag's test below).
    await fixture.redis.xtrim(stream, "MAXLEN", 4);
    const [info] = (await fixture.redis.call("XINFO", "GROUPS", stream)) as unknown[][];
    const reported = Number(info?.[info.indexOf("lag") + 1]);
    await refresher.refresh();
    if (reported > 4) {
      // The server's bug: more waiting than the stream holds is unknown.
      expect(await gaugeValue(metrics.lagEntries, labels)).toBeUndefined();
      expect(await gaugeValue(metrics.lagValid, labels)).toBe(0);
    } else {
      // A server without the bug: its lag is right, and exported as it is.
      expect(reported).toBe(4);
      expect(await gaugeValue(metrics.lagEntries, labels)).toBe(4);
      expect(await gaugeValue(metrics.lagValid, labels)).toBe(1);
    }
    expect(await gaugeValue(metrics.streamLengthEntries, { stream })).toBe(4);
  });

  it("trusts a lag up to the stream's length, as each server reports it after that trim", () => {
    const options = { perConsumer: false, maxConsumersPerGroup: 50, groupLag: true };
    const afterTrim = (lag: number | null): GroupValues => ({
      pending: 0,
      oldestPendingId: undefined,
      oldestPendingIdleMs: 0,
      oldestPendingDeliveries: 0,
      consumers: [],
      lag,
      lastDeliveredId: "3-0",
      streamLength: 4,
      deadLetterLength: undefined,
    });
    // Redis 7.0 to 7.4, Valkey 8.0: the 3 trimmed entries are still counted.
    expect(validLag(afterTrim(7), options)).toBeUndefined();
    // Redis 8.0+: the 4 entries left.
    expect(validLag(afterTrim(4), options)).toBe(4);
    expect(validLag(afterTrim(0), options)).toBe(0);
    expect(validLag(afterTrim(null), options)).toBeUndefined();
    expect(validLag(afterTrim(4), { ...options, groupLag: false })).toBeUndefined();
  });

  it("exports no lag sample while XINFO GROUPS reports lag as null, and a real 0 once known", async () => {
    const stream = uniquePrefix("lag-null");
    const labels = { stream, group: "workers" };
    const ids: string[] = [];
    for (let i = 0; i < 4; i += 1)
      ids.push((await fixture.redis.xadd(stream, "*", "n", String(i))) ?? "");
    await fixture.redis.xgroup("CREATE", stream, "workers", "0");
    // A deletion plus an arbitrary id leaves Redis unable to count what the group has read.
    await fixture.redis.xdel(stream, ids[1] ?? "");
    await fixture.redis.xgroup("SETID", stream, "workers", ids[0] ?? "");
    const info = (await fixture.redis.call("XINFO", "GROUPS", stream)) as unknown[][];
    expect(info[0]?.[info[0].indexOf("lag") + 1]).toBeNull();
    const { refresher, metrics } = createTestRefresher(fixture.redis, [groupConfig(stream)]);

    await refresher.refresh();
    expect(await gaugeValue(metrics.lagEntries, labels)).toBeUndefined();
    expect(await gaugeValue(metrics.lagValid, labels)).toBe(0);
    // Whether anything waits is unknown too: no age sample rather than a guess.
    expect(await gaugeValue(metrics.lagSeconds, labels)).toBeUndefined();

    await fixture.redis.xgroup("SETID", stream, "workers", "$");
    await refresher.refresh();
    expect(await gaugeValue(metrics.lagEntries, labels)).toBe(0);
    expect(await gaugeValue(metrics.lagValid, labels)).toBe(1);
    expect(await gaugeValue(metrics.lagSeconds, labels)).toBe(0);

    // A server found without lag never gets a lag sample, whatever the reply holds.
    refresher.setCapabilities({
      product: "redis",
      version: "7.0.15",
      redisVersion: "7.0.15",
      reportsDeletedIds: true,
      groupLag: false,
      consumerInactive: false,
    });
    await refresher.refresh();
    expect(await gaugeValue(metrics.lagEntries, labels)).toBeUndefined();
    expect(await gaugeValue(metrics.lagValid, labels)).toBe(0);
  });

  it("reads the dead-letter stream's length, 0 before it exists", async () => {
    const stream = uniquePrefix("dead");
    const group = groupConfig(stream);
    const labels = { stream, group: "workers" };
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1));
    const { refresher, metrics } = createTestRefresher(fixture.redis, [group]);
    await refresher.refresh();
    expect(await gaugeValue(metrics.deadLetterLengthEntries, labels)).toBe(0);
    for (let i = 0; i < 3; i += 1)
      await fixture.redis.xadd(group.deadLetterStream, "*", "n", String(i));
    await refresher.refresh();
    expect(await gaugeValue(metrics.deadLetterLengthEntries, labels)).toBe(
      await fixture.redis.xlen(group.deadLetterStream),
    );
    expect(await gaugeValue(metrics.deadLetterLengthEntries, labels)).toBe(3);
  });
});
