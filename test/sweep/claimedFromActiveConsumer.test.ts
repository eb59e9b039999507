import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { recordSweep } from "../../src/daemon/recordSweep.js";
import { createJanitorMetrics } from "../../src/metrics/janitorMetrics.js";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import { addStuckEntries, consumeOneFresh, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";
import { waitFor } from "../support/waitFor.js";
import { gaugeValue } from "../metrics/refresherHarness.js";

const fixture = useRedisServer();
/**
 * Short, so that a consumer becomes inactive while the test waits on it (state, not sleep); long
 * enough that the poller's read stays within it until the sweep runs on a loaded machine (250 ms
 * did not, once, at load 22).
 */
const MIN_IDLE_MS = 2_000;

async function consumerIdle(stream: string): Promise<Map<string, number>> {
  const reply = (await fixture.redis.call("XINFO", "CONSUMERS", stream, "workers")) as unknown[][];
  return new Map(reply.map((flat) => [String(flat[1]), Number(flat[5])]));
}

describe("stream_janitor_claimed_from_active_consumer_entries_total", () => {
  for (const action of ["requeue", "reassign", "dead-letter"] as const) {
    it(`${action}: counts entries claimed from a consumer that read within minIdleMs, not from a dead one`, async () => {
      const stream = uniquePrefix(`active-owner-${action}`);
      await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3), {
        consumer: "dead",
      });
      await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2), {
        consumer: "poller",
      });
      // Fabricating the PEL made both consumers look seen (XCLAIM resets a consumer's idle).
      await waitFor(
        async () => [...(await consumerIdle(stream)).values()].every((ms) => ms >= MIN_IDLE_MS),
        { what: "both consumers to be inactive" },
      );
      // The poller keeps reading while its own two entries idle for an hour.
      await consumeOneFresh(fixture.redis, stream, "poller");
      const group = groupConfig(stream, { action, minIdleMs: MIN_IDLE_MS });

      const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);

      expect(result.error).toBeUndefined();
      expect(result.claimed).toBe(5);
      expect(result.claimedFromActiveConsumer).toBe(2);
      const metrics = createJanitorMetrics(new Registry(), "test");
      recordSweep(metrics, result, 1_000_000);
      expect(
        await gaugeValue(metrics.claimedFromActiveConsumerEntries, { stream, group: "workers" }),
      ).toBe(2);
    });
  }

  it("counts nothing when every owner is dead", async () => {
    const stream = uniquePrefix("active-owner-none");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(4), {
      consumer: "dead",
    });
    await waitFor(
      async () => [...(await consumerIdle(stream)).values()].every((ms) => ms >= MIN_IDLE_MS),
      { what: "the consumer to be inactive" },
    );
    const group = groupConfig(stream, { minIdleMs: MIN_IDLE_MS });
    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
    expect(result).toMatchObject({ claimed: 4, requeued: 4, claimedFromActiveConsumer: 0 });
  });
});
