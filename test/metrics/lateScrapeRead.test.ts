import { Redis } from "ioredis";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Timers } from "../../src/core/timers.js";
import { createJanitorMetrics } from "../../src/metrics/janitorMetrics.js";
import { createScrapeRefresher } from "../../src/scrape/createScrapeRefresher.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { startGateProxy, type GateProxy } from "../support/gateProxy.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { captureLogger, groupConfig } from "../support/sweepHarness.js";
import { waitFor } from "../support/waitFor.js";
import { gaugeValue, janitorConfig } from "./refresherHarness.js";

const fixture = useRedisServer();
/** The refresher's connection, through a proxy that holds its replies back while closed. */
let gate: GateProxy;
let reader: Redis;
const WAIT_MS = 300;

beforeAll(async () => {
  gate = await startGateProxy(fixture.server.port);
  reader = new Redis(gate.port, "127.0.0.1", { lazyConnect: true });
  await reader.connect();
});
afterAll(async () => {
  reader.disconnect();
  await gate.stop();
});

/** Timers the test fires by hand: a scrape's wait ends when the test says so. */
class ManualTimers implements Timers {
  readonly armed: { callback: () => void; ms: number }[] = [];
  private readonly cleared = new Set<unknown>();

  setTimeout(callback: () => void, ms: number): unknown {
    const timer = { callback, ms };
    this.armed.push(timer);
    return timer;
  }

  clearTimeout(handle: unknown): void {
    this.cleared.add(handle);
  }

  /** Fires the last armed timer, unless it was cleared. */
  fireLast(): void {
    const timer = this.armed.at(-1);
    if (timer === undefined) throw new Error("no timer was armed");
    if (!this.cleared.has(timer)) timer.callback();
  }
}

/**
 * `now`: the refresher's monotonic clock, which times its reads. By default it stands still, so
 * every read looks instant and a scrape always waits for its read (up to WAIT_MS).
 */
function lateRefresher(stream: string, now: () => number = () => 0, waitMs = WAIT_MS) {
  const timers = new ManualTimers();
  const metrics = createJanitorMetrics(new Registry(), "0.0.0-test");
  const groups = [groupConfig(stream)];
  const refresher = createScrapeRefresher({
    redis: reader,
    groups,
    metrics,
    logger: captureLogger().logger,
    // A read's own bound far beyond the test's pause: only the scrape's wait can end it early.
    config: janitorConfig("redis://unused", groups, {
      scrapeTimeoutMs: 60_000,
      scrapeReadWaitMs: waitMs,
    }),
    timers,
    now,
  });
  return { refresher, metrics, timers, labels: { stream, group: "workers" } };
}

/** Redis TIME in seconds, the clock the read's timestamp is on. */
async function redisSeconds(): Promise<number> {
  const [seconds, micros] = await fixture.redis.time();
  return Number(seconds) + Number(micros) / 1e6;
}

describe("a scrape whose read takes longer than metrics.scrapeReadWaitMs", () => {
  it("is answered with the last complete read, counted and stamped; the read lands for the next scrape", async () => {
    const stream = uniquePrefix("late-read");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2));
    const { refresher, metrics, timers, labels } = lateRefresher(stream);
    const before = await redisSeconds();
    expect(await refresher.refreshForScrape()).toEqual({});
    const firstRead = await gaugeValue(metrics.scrapeReadTimestamp, {});
    expect(firstRead).toBeGreaterThanOrEqual(before);
    expect(firstRead).toBeLessThanOrEqual(await redisSeconds());
    expect(await gaugeValue(metrics.pendingEntries, labels)).toBe(2);

    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3));
    gate.close();
    let landed: Promise<void> | undefined;
    try {
      const late = refresher.refreshForScrape();
      // Redis has answered the read (the answer waits in the proxy): the read is under way.
      await waitFor(() => gate.held > 0, { what: "the read's replies to be held back" });
      expect(timers.armed.map((timer) => timer.ms)).toEqual([WAIT_MS]);
      timers.fireLast();
      ({ landed } = await late);
      expect(landed).toBeInstanceOf(Promise);
      // The previous read's numbers and time, and the scrape counted.
      expect(await gaugeValue(metrics.pendingEntries, labels)).toBe(2);
      expect(await gaugeValue(metrics.scrapeReadTimestamp, {})).toBe(firstRead);
      expect(await gaugeValue(metrics.scrapeLateReads, {})).toBe(1);
    } finally {
      gate.open();
    }
    // The read that was late lands, and a scrape that gets its read in time shows it.
    await landed;
    expect(await gaugeValue(metrics.pendingEntries, labels)).toBe(5);
    expect(await refresher.refreshForScrape()).toEqual({});
    expect(await gaugeValue(metrics.scrapeLateReads, {})).toBe(1);
    expect(await gaugeValue(metrics.scrapeReadTimestamp, {})).toBeGreaterThanOrEqual(
      firstRead ?? Infinity,
    );
    await refresher.stop();
  });

  it("waits for the whole read when no read has completed yet (the first scrape shows numbers, not nothing)", async () => {
    const stream = uniquePrefix("first-read");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(4));
    const { refresher, metrics, timers, labels } = lateRefresher(stream);
    await refresher.refreshForScrape();
    expect(timers.armed).toHaveLength(0);
    expect(await gaugeValue(metrics.pendingEntries, labels)).toBe(4);
    expect(await gaugeValue(metrics.scrapeLateReads, {})).toBe(0);
    await refresher.stop();
  });

  it("does not wait at all once the last read took longer than the wait: it would be answered late anyway", async () => {
    const stream = uniquePrefix("slow-reads");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2));
    // Each reading of the clock is WAIT_MS + 1 later: every read takes longer than the wait.
    let clockMs = 0;
    const { refresher, metrics, timers, labels } = lateRefresher(stream, () => {
      clockMs += WAIT_MS + 1;
      return clockMs;
    });
    expect(await refresher.refreshForScrape()).toEqual({});
    expect(await gaugeValue(metrics.pendingEntries, labels)).toBe(2);

    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3));
    gate.close();
    let landed: Promise<void> | undefined;
    try {
      ({ landed } = await refresher.refreshForScrape());
      // Answered without arming the wait's timer: the last read's numbers, the scrape counted.
      expect(timers.armed).toHaveLength(0);
      expect(landed).toBeInstanceOf(Promise);
      expect(await gaugeValue(metrics.pendingEntries, labels)).toBe(2);
      expect(await gaugeValue(metrics.scrapeLateReads, {})).toBe(1);
    } finally {
      gate.open();
    }
    // Its read still lands, for the next scrape.
    await landed;
    expect(await gaugeValue(metrics.pendingEntries, labels)).toBe(5);
    await refresher.stop();
  });
  it("does not wait once the last read and the page's rendering after it took longer than the wait", async () => {
    const stream = uniquePrefix("slow-page");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2));
    // Reads look instant (the clock stands still); the page took WAIT_MS + 1 to render last time.
    const { refresher, metrics, timers, labels } = lateRefresher(stream);
    expect(await refresher.refreshForScrape(WAIT_MS + 1)).toEqual({});

    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3));
    const { landed } = await refresher.refreshForScrape(WAIT_MS + 1);
    // A scrape that waited would have been answered after its read plus a rendering: later than
    // the wait. It is answered at once with the last read's page, and its read lands for the next.
    expect(timers.armed).toHaveLength(0);
    expect(landed).toBeInstanceOf(Promise);
    expect(await gaugeValue(metrics.scrapeLateReads, {})).toBe(1);
    await landed;
    expect(await gaugeValue(metrics.pendingEntries, labels)).toBe(5);

    // A page that renders within the wait beside an instant read: the scrape waits for its read
    // again, for the wait less the page's writing, so that it is answered within the wait.
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1));
    expect(await refresher.refreshForScrape(WAIT_MS - 100)).toEqual({});
    expect(timers.armed.map((timer) => timer.ms)).toEqual([100]);
    expect(await gaugeValue(metrics.pendingEntries, labels)).toBe(6);
    await refresher.stop();
  });

  it("waits for every read when metrics.scrapeReadWaitMs is metrics.scrapeTimeoutMs, however long the page took", async () => {
    const stream = uniquePrefix("always-wait");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2));
    const { refresher, metrics, timers, labels } = lateRefresher(stream, () => 0, 60_000);
    expect(await refresher.refreshForScrape()).toEqual({});
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1));
    // The operator chose to see every scrape's own read (README "How gauges are read").
    expect(await refresher.refreshForScrape(120_000)).toEqual({});
    expect(timers.armed.map((timer) => timer.ms)).toEqual([60_000]);
    expect(await gaugeValue(metrics.pendingEntries, labels)).toBe(3);
    expect(await gaugeValue(metrics.scrapeLateReads, {})).toBe(0);
    await refresher.stop();
  });
});
