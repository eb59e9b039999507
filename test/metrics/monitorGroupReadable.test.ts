import { describe, expect, it } from "vitest";
import { Registry } from "prom-client";
import { createJanitorMetrics } from "../../src/metrics/janitorMetrics.js";
import { recordSweep } from "../../src/daemon/recordSweep.js";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";
import { gaugeValue } from "./refresherHarness.js";

const fixture = useRedisServer();

describe("a monitor group that cannot be read", () => {
  it("fails its sweep with the reason, and gets no fresh last_sweep_success", async () => {
    const healthy = uniquePrefix("monitor-ok");
    const missing = uniquePrefix("monitor-missing");
    const wrongType = uniquePrefix("monitor-wrong-type");
    const noGroup = uniquePrefix("monitor-no-group");
    await addStuckEntries(fixture.redis, healthy, "workers", numberedBodies(2));
    await fixture.redis.set(wrongType, "a string");
    await fixture.redis.xadd(noGroup, "*", "n", "1");
    const metrics = createJanitorMetrics(new Registry(), "test");
    const context = sweepContext(fixture.redis);
    const sweep = async (stream: string) => {
      const result = await sweepOnce(
        groupConfig(stream, { action: "monitor" }),
        context,
        neverAborted,
      );
      recordSweep(metrics, result, 1_000_000);
      return result;
    };

    expect(await sweep(healthy)).toMatchObject({ complete: true, claimed: 0 });
    expect((await sweep(healthy)).error).toBeUndefined();
    for (const [stream, kind] of [
      [missing, "missing-stream"],
      [wrongType, "wrong-type"],
      [noGroup, "missing-group"],
    ] as const) {
      const result = await sweep(stream);
      expect(result).toMatchObject({ complete: false, errorKind: kind });
      expect(result.error).toContain(stream);
      const labels = { stream, group: "workers" };
      expect(await gaugeValue(metrics.lastSweepSuccessTimestampSeconds, labels)).toBeUndefined();
      expect(await gaugeValue(metrics.sweepFailures, { ...labels, kind })).toBe(1);
    }
    expect(await gaugeValue(metrics.lastSweepSuccessTimestampSeconds, { stream: healthy })).toBe(
      1000,
    );
    // Nothing was created by the check.
    expect(await fixture.redis.exists(missing)).toBe(0);
    expect(await fixture.redis.type(wrongType)).toBe("string");
  });
});
