import { describe, expect, it } from "vitest";
import type { LeaderTerm } from "../../src/lease/types.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { useSweepWork } from "../daemon/janitorHarness.js";
import { createTestRefresher, gaugeValue } from "./refresherHarness.js";

const fixture = useRedisServer();
const sweepWork = useSweepWork(fixture);

const neverAborted = new AbortController().signal;

describe("after a sweep", () => {
  it("the PEL maxima are refreshed for the groups it changed, not a scan interval later", async () => {
    const stream = uniquePrefix("swept");
    const labels = { stream, group: "workers" };
    const group = groupConfig(stream, { minIdleMs: 60_000, maxDeliveries: 50 });
    // Stuck entries (an hour idle, 7 deliveries) behind fresh ones the sweep must leave alone.
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(20), {
      idleMs: 3_600_000,
      deliveries: 7,
    });
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(5), {
      consumer: "alive",
      idleMs: 1000,
    });
    // The default cadence (a minute): only the sweep can make the scan come sooner.
    const { refresher, metrics } = createTestRefresher(fixture.redis, [group]);
    await refresher.scanOnce(neverAborted);
    await refresher.refresh();
    expect(await gaugeValue(metrics.pendingMaxIdleSeconds, labels)).toBeGreaterThanOrEqual(3600);
    expect(await gaugeValue(metrics.pendingMaxDeliveries, labels)).toBe(7);

    await fixture.redis.set(`${stream}:lease`, "me");
    const term: LeaderTerm = {
      signal: neverAborted,
      fence: { key: `${stream}:lease`, value: "me" },
      fencingToken: 1,
    };
    // Built as `run` builds it: the sweep work tells the refresher which groups it changed.
    const { supervisor } = sweepWork(stream, [group], { refresher });
    const [result] = (await supervisor.supervise(term)) ?? [];
    expect(result).toMatchObject({ claimed: 20, requeued: 20 });

    // Right after the sweep: the five fresh entries are left, none of them an hour idle.
    await refresher.refresh();
    expect(await gaugeValue(metrics.pendingEntries, labels)).toBe(5);
    expect(await gaugeValue(metrics.pendingMaxIdleSeconds, labels)).toBeLessThan(60);
    expect(await gaugeValue(metrics.pendingMaxDeliveries, labels)).toBe(1);

    // And the group's own rescan restores exact values and their timestamp.
    await refresher.rescanChanged();
    await refresher.refresh();
    expect(await gaugeValue(metrics.pelScanTimestampSeconds, labels)).toBeDefined();
    expect(await gaugeValue(metrics.pendingMaxIdleSeconds, labels)).toBeLessThan(60);
    expect(await gaugeValue(metrics.pendingMaxDeliveries, labels)).toBe(1);
    await refresher.stop();
  });
});
