import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import { PelScanner } from "../../src/scrape/PelScanner.js";
import { commandCalls } from "../support/commandStats.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";

const fixture = useRedisServer();

const silent = pino({ level: "silent" });

async function xpendingCalls(): Promise<number> {
  return (await commandCalls(fixture.redis, ["xpending"])).xpending ?? 0;
}

describe("PelScanner", () => {
  it("pages through the PEL 1,000 at a time and finds the exact extremes", async () => {
    const stream = uniquePrefix("paged");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2500), { idleMs: 1000 });
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1), {
      idleMs: 9_000_000,
      deliveries: 42,
    });
    const scanner = new PelScanner({
      redis: fixture.redis,
      groups: [groupConfig(stream)],
      logger: silent,
      intervalMs: 1,
    });
    const calls = await xpendingCalls();
    await scanner.scanOnce(new AbortController().signal);
    // 2,501 entries: three full-sized pages, one with a single entry.
    expect((await xpendingCalls()) - calls).toBe(3);
    const result = scanner.results.get(`${stream}/workers`);
    expect(result).toMatchObject({ entries: 2501, maxDeliveries: 42 });
    expect(result?.maxIdleMs).toBeGreaterThanOrEqual(9_000_000);
    expect(result?.maxIdleMs).toBeLessThan(9_010_000);
  });

  it("keeps no partial result when aborted halfway, and joins a pass in flight", async () => {
    const stream = uniquePrefix("aborted");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1500));
    const scanner = new PelScanner({
      redis: fixture.redis,
      groups: [groupConfig(stream)],
      logger: silent,
      intervalMs: 1,
    });
    const controller = new AbortController();
    const first = scanner.scanOnce(controller.signal);
    expect(scanner.scanOnce(new AbortController().signal)).toBe(first);
    controller.abort();
    await first;
    expect(scanner.results.size).toBe(0);
    await scanner.scanOnce(new AbortController().signal);
    expect(scanner.results.get(`${stream}/workers`)?.entries).toBe(1500);
  });

  it("skips a missing group without failing the others", async () => {
    const stream = uniquePrefix("present");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2));
    const groups = [groupConfig(uniquePrefix("absent")), groupConfig(stream)];
    const scanner = new PelScanner({ redis: fixture.redis, groups, logger: silent, intervalMs: 1 });
    await scanner.scanOnce(new AbortController().signal);
    expect([...scanner.results.keys()]).toEqual([`${stream}/workers`]);
  });

  it("runs on its own jittered cadence from start() and leaves no timer after stop()", async () => {
    const stream = uniquePrefix("cadence");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1));
    const timers: { fire: () => void; delayMs: number; cancelled: boolean }[] = [];
    const scanner = new PelScanner({
      redis: fixture.redis,
      groups: [groupConfig(stream)],
      logger: silent,
      intervalMs: 60_000,
      random: () => 0.5,
      timers: {
        setTimeout: (fire, delayMs) => {
          const timer = { fire, delayMs, cancelled: false };
          timers.push(timer);
          return timer;
        },
        clearTimeout: (timer) => {
          (timer as { cancelled: boolean }).cancelled = true;
        },
      },
    });
    const entries = (): number | undefined => scanner.results.get(`${stream}/workers`)?.entries;
    // Firing a timer starts a pass synchronously; scanOnce() joins it, so the test knows when it ends.
    const firePass = async (index: number): Promise<void> => {
      timers[index]?.fire();
      await scanner.scanOnce(new AbortController().signal);
    };

    scanner.start();
    scanner.start();
    expect(timers.map((t) => t.delayMs)).toEqual([0]);
    await firePass(0);
    expect(entries()).toBe(1);
    // The next pass is scheduled only once this one has ended: interval plus jitter (10 % here).
    await vi.waitFor(() => expect(timers).toHaveLength(2));
    expect(timers[1]?.delayMs).toBeCloseTo(66_000);

    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1));
    const calls = await xpendingCalls();
    await firePass(1);
    expect(entries()).toBe(2);
    expect((await xpendingCalls()) - calls).toBe(1);
    await vi.waitFor(() => expect(timers).toHaveLength(3));

    await scanner.stop();
    expect(timers.map((t) => t.cancelled)).toEqual([false, false, true]);
    scanner.start();
    expect(timers).toHaveLength(3);
  });

  it("markChanged drops the group's result, discards a scan that started before, and rescans the group alone", async () => {
    const changed = uniquePrefix("changed");
    const other = uniquePrefix("other");
    await addStuckEntries(fixture.redis, changed, "workers", numberedBodies(1500), {
      idleMs: 7_200_000,
      deliveries: 9,
    });
    await addStuckEntries(fixture.redis, other, "workers", numberedBodies(3));
    const timers: (() => void)[] = [];
    const scanner = new PelScanner({
      redis: fixture.redis,
      groups: [groupConfig(changed), groupConfig(other)],
      logger: silent,
      intervalMs: 60_000,
      timers: {
        setTimeout: (callback) => {
          timers.push(callback);
          return callback;
        },
        clearTimeout: () => undefined,
      },
    });
    const id = `${changed}/workers`;
    await scanner.scanOnce(new AbortController().signal);
    expect(scanner.results.get(id)).toMatchObject({ maxDeliveries: 9 });

    // A sweep changes the group while a pass is reading it: that pass's maximum may be gone.
    const pass = scanner.scanOnce(new AbortController().signal);
    scanner.markChanged(id);
    expect(scanner.results.has(id)).toBe(false);
    await pass;
    expect(scanner.results.has(id)).toBe(false);
    expect(scanner.results.has(`${other}/workers`)).toBe(true);
    // The sweep emptied the old tail; the rescan (one timer, not the full cadence) sees it.
    const pending = (await fixture.redis.call("XPENDING", changed, "workers", "-", "+", 2000)) as [
      string,
    ][];
    await fixture.redis.xack(
      changed,
      "workers",
      ...pending.slice(0, 1000).map(([entryId]) => entryId),
    );
    // The rest was handed to a live consumer: fresh, delivered twice.
    await fixture.redis.call(
      "XCLAIM",
      changed,
      "workers",
      "alive",
      0,
      ...pending.slice(1000).map(([entryId]) => entryId),
      "RETRYCOUNT",
      2,
      "JUSTID",
    );
    expect(timers).toHaveLength(1);
    const calls = await xpendingCalls();
    timers[0]?.();
    await vi.waitFor(() =>
      expect(scanner.results.get(id)).toMatchObject({ entries: 500, maxDeliveries: 2 }),
    );
    expect(scanner.results.get(id)?.maxIdleMs).toBeLessThan(60_000);
    // Only the changed group was read: one page for 500 entries.
    expect((await xpendingCalls()) - calls).toBe(1);
    await scanner.stop();
  });
});
