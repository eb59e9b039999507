import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addStuckEntries, numberedBodies, pendingEntries } from "../support/fabricatePel.js";
import { startRedis, uniquePrefix, type RedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { createTestRefresher, gaugeSamples } from "./refresherHarness.js";

let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  server = await startRedis();
  redis = server.client();
});
afterAll(async () => {
  await server.stop();
});

/** Consumers c1..c5 holding 1..5 pending entries. */
async function fiveConsumers(stream: string): Promise<void> {
  for (let i = 1; i <= 5; i += 1) {
    await addStuckEntries(redis, stream, "workers", numberedBodies(i), { consumer: `c${i}` });
  }
}

describe("per-consumer pending entries", () => {
  it("are off by default", async () => {
    const stream = uniquePrefix("consumers-off");
    await fiveConsumers(stream);
    const { refresher, metrics } = createTestRefresher(redis, [groupConfig(stream)]);
    await refresher.refresh();
    expect(await gaugeSamples(metrics.consumerPendingEntries)).toEqual([]);
  });

  it("when on, keep the consumers holding most, bounded, and drop stale consumers", async () => {
    const stream = uniquePrefix("consumers-on");
    await fiveConsumers(stream);
    const { refresher, metrics } = createTestRefresher(redis, [groupConfig(stream)], {
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
    const owned = (await pendingEntries(redis, stream, "workers")).filter(
      (e) => e.consumer === "c5",
    );
    await redis.xack(stream, "workers", ...owned.map((e) => e.id));
    await refresher.refresh();
    expect(await byConsumer()).toEqual({ c4: 4, c3: 3, c2: 2 });
  });
});
