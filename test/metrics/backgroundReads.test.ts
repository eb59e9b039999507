import { createServer } from "node:net";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { createTestRefresher, gaugeValue } from "./refresherHarness.js";

const fixture = useRedisServer();

/** Counts the listener's calls; `next()` resolves at the next one. */
function landings() {
  let resolveNext: () => void = () => undefined;
  const seen = { count: 0 };
  return {
    seen,
    listener: () => {
      seen.count += 1;
      resolveNext();
    },
    next: () => new Promise<void>((resolve) => (resolveNext = resolve)),
  };
}

/** A port nothing listens on: a connection to it is refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("the refresher's reads no scrape asked for", () => {
  it("tell the listener when the start-up read and a new list's read land whole, not a scrape's read", async () => {
    const first = uniquePrefix("ahead-first");
    const second = uniquePrefix("ahead-second");
    await addStuckEntries(fixture.redis, first, "workers", numberedBodies(2));
    await addStuckEntries(fixture.redis, second, "workers", numberedBodies(3));
    const { refresher, metrics } = createTestRefresher(fixture.redis, [groupConfig(first)]);
    const { seen, listener, next } = landings();
    refresher.onBackgroundRead(listener);
    try {
      expect(refresher.showsRead).toBe(false);
      const started = next();
      refresher.start();
      await started;
      expect(seen.count).toBe(1);
      expect(refresher.showsRead).toBe(true);
      expect(await gaugeValue(metrics.pendingEntries, { stream: first })).toBe(2);
      await refresher.refreshForScrape();
      expect(seen.count).toBe(1);
      const regrouped = next();
      refresher.setGroups([groupConfig(second)]);
      await regrouped;
      expect(seen.count).toBe(2);
      expect(await gaugeValue(metrics.pendingEntries, { stream: second })).toBe(3);
    } finally {
      await refresher.stop();
    }
  });

  it("do not tell it of a read that failed: there is no page worth writing ahead", async () => {
    const unreachable = new Redis(await closedPort(), "127.0.0.1", {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    const { refresher, metrics } = createTestRefresher(unreachable, [groupConfig("absent")]);
    const { seen, listener } = landings();
    refresher.onBackgroundRead(listener);
    try {
      refresher.start();
      // Joins the start-up read; the listener's check runs before this await returns.
      await refresher.refresh();
      expect(seen.count).toBe(0);
      expect(refresher.showsRead).toBe(false);
      expect(await gaugeValue(metrics.redisUp, {})).toBe(0);
    } finally {
      await refresher.stop();
      unreachable.disconnect();
    }
  });
});
