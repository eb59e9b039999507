import { describe, expect, it } from "vitest";
import { addStuckEntries, numberedBodies, pendingEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { createTestRefresher, gaugeSamples } from "./refresherHarness.js";

const fixture = useRedisServer();

/** Consumers c1..c5 holding 1..5 pending entries. */
async function fiveConsumers(stream: string): Promise<void> {
  for (let i = 1; i <= 5; i += 1) {
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(i), {
      consumer: `c${i}`,
    });
  }
}

describe("per-consumer pending entries", () => {
  it("are off by default", async () => {
    const stream = uniquePrefix("consumers-off");
    await fiveConsumers(stream);
    const { refresher, metrics } = createTestRefresher(fixture.redis, [groupConfig(stream)]);
    await refresher.refresh();
    expect(await gaugeSamples(metrics.consumerPendingEntries)).toEqual([]);
  });

  it("when on, keep the consumers holding most, bounded, and drop stale consumers", async () => {
    const stream = uniquePrefix("consumers-on");
    await fiveConsumers(stream);
    const { refresher, metrics } = createTestRefresher(fixture.redis, [groupConfig(stream)], {
      perConsumer: true,
      maxConsumersPerGroup: 3,
    });
    const byConsumer = async (): Promise<Record<string, number>> =>
      Object.fromEntries(
        (await gaugeSamples(metrics.consumerPendingEntries)).map((s) => [
          String(s.labels.consumer),
          s.value,
        ]),
      );

    await refresher.refresh();
    expect(await byConsumer()).toEqual({ c5: 5, c4: 4, c3: 3 });
    const samples = await gaugeSamples(metrics.consumerPendingEntries);
    expect(samples.every((s) => s.labels.stream === stream && s.labels.group === "workers")).toBe(
      true,
    );

    // c5 acknowledges everything: it has no series any more and c2 moves into the top three.
    const owned = (await pendingEntries(fixture.redis, stream, "workers")).filter(
      (e) => e.consumer === "c5",
    );
    await fixture.redis.xack(stream, "workers", ...owned.map((e) => e.id));
    await refresher.refresh();
    expect(await byConsumer()).toEqual({ c4: 4, c3: 3, c2: 2 });
  });
});
