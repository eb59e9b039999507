import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { PelScanner } from "../../src/scrape/PelScanner.js";
import { scanGroupPel } from "../../src/scrape/scanGroupPel.js";
import { backoffPolicy, dueAfterMs } from "../../src/core/backoffThreshold.js";
import { addStuckEntries, numberedBodies, pendingEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { createTestRefresher, gaugeValue } from "./refresherHarness.js";

const fixture = useRedisServer();
const neverAborted = new AbortController().signal;

/** minIdleMs 1 s, backoffMs [5 s, 1 min]: a PEL with due and waiting entries over two pages. */
async function mixedPel(stream: string): Promise<number> {
  const add = (count: number, idleMs: number, deliveries: number) =>
    addStuckEntries(fixture.redis, stream, "workers", numberedBodies(count), {
      idleMs,
      deliveries,
    });
  await add(1200, 10_000, 1); // due: past 5 s
  await add(300, 3000, 1); // waiting: past minIdleMs, not past 5 s
  await add(400, 10_000, 2); // waiting: second delivery waits 1 min
  await add(7, 7_200_000, 9); // due: the last tier repeats
  await add(50, 0, 1); // fresh
  return 1207;
}

describe("stream_janitor_pending_due_entries", () => {
  it("counts the entries the next sweep would claim, from the paged PEL scan", async () => {
    const stream = uniquePrefix("due");
    const due = await mixedPel(stream);
    const group = groupConfig(stream, { minIdleMs: 1000, backoffMs: [5000, 60_000] });
    const scanner = new PelScanner({
      redis: fixture.redis,
      groups: [group],
      logger: pino({ level: "silent" }),
      intervalMs: 1,
    });
    await scanner.scanOnce(neverAborted);
    expect(scanner.results.get(group.id)).toMatchObject({ entries: 1957, dueEntries: due });
  });

  it("stops at a bound when asked (inspect), saying its counts are partial", async () => {
    const stream = uniquePrefix("due-bounded");
    await mixedPel(stream);
    const group = groupConfig(stream, { minIdleMs: 1000, backoffMs: [5000, 60_000] });
    const result = await scanGroupPel(fixture.redis, group, neverAborted, { maxEntries: 1000 });
    expect(result).toMatchObject({ entries: 1000, dueEntries: 1000, partial: true });
    const whole = await scanGroupPel(fixture.redis, group, neverAborted, { maxEntries: 5000 });
    expect(whole).toMatchObject({ entries: 1957, dueEntries: 1207 });
    expect(whole?.partial).toBeUndefined();
  });

  it("follows each entry's jittered threshold, as the sweep script does", async () => {
    const stream = uniquePrefix("due-jitter");
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(300), {
      idleMs: 10_000,
    });
    const config = { minIdleMs: 1000, backoffMs: [10_000], backoffJitter: 0.5 };
    const group = groupConfig(stream, config);
    const pending = await pendingEntries(fixture.redis, stream, "workers");
    const expected = pending.filter((e) => e.idleMs >= dueAfterMs(backoffPolicy(config), e.id, 1));
    expect(expected.length).toBeGreaterThan(50);
    expect(expected.length).toBeLessThan(250);
    const scanner = new PelScanner({
      redis: fixture.redis,
      groups: [group],
      logger: pino({ level: "silent" }),
      intervalMs: 1,
    });
    await scanner.scanOnce(neverAborted);
    const counted = scanner.results.get(group.id)?.dueEntries ?? -1;
    // Idle times grow by the few ms between the two reads: a handful may cross their turn.
    expect(counted).toBeGreaterThanOrEqual(expected.length);
    expect(counted).toBeLessThanOrEqual(expected.length + 5);
    expect(ids).toHaveLength(300);
  });

  it("is exported per group once scanned; without backoff, due means idle past minIdleMs", async () => {
    const stream = uniquePrefix("due-gauge");
    await mixedPel(stream);
    const backoff = groupConfig(stream, { minIdleMs: 1000, backoffMs: [5000, 60_000] });
    const plain = groupConfig(stream, { group: "plain", minIdleMs: 2000 });
    await addStuckEntries(fixture.redis, stream, "plain", numberedBodies(4), { idleMs: 2500 });
    await addStuckEntries(fixture.redis, stream, "plain", numberedBodies(3), { idleMs: 0 });
    const { refresher, metrics } = createTestRefresher(fixture.redis, [backoff, plain]);

    await refresher.refresh();
    // Before the first scan: only the oldest entry is known, a lower bound (it is due).
    expect(await gaugeValue(metrics.pendingDueEntries, { stream, group: "workers" })).toBe(1);
    await refresher.scanOnce(neverAborted);
    await refresher.refresh();
    expect(await gaugeValue(metrics.pendingDueEntries, { stream, group: "workers" })).toBe(1207);
    expect(await gaugeValue(metrics.pendingDueEntries, { stream, group: "plain" })).toBe(4);
  });
});

describe("stream_janitor_pending_due_entries: entries delivered more than maxDeliveries times", () => {
  it("counts them as due whatever their idle time, as the sweep dead-letters them (not for monitor)", async () => {
    const stream = uniquePrefix("due-passed");
    const add = (count: number, deliveries: number) =>
      addStuckEntries(fixture.redis, stream, "workers", numberedBodies(count), {
        idleMs: 0,
        deliveries,
      });
    await add(3, 6); // passed maxDeliveries 5: due, though fresh
    await add(2, 5); // at maxDeliveries: maybe in its last delivery, not due while fresh
    await add(4, 1);
    const settings = { minIdleMs: 60_000, maxDeliveries: 5, backoffMs: [60_000, 600_000] };
    const group = groupConfig(stream, settings);
    expect(await scanGroupPel(fixture.redis, group, neverAborted)).toMatchObject({
      entries: 9,
      dueEntries: 3,
    });
    const monitor = groupConfig(stream, { ...settings, action: "monitor" });
    expect(await scanGroupPel(fixture.redis, monitor, neverAborted)).toMatchObject({
      dueEntries: 0,
    });
    // Before the first scan, the oldest entry alone (fresh, passed) is known: due.
    const policy = backoffPolicy(group);
    expect(dueAfterMs(policy, "1-0", 6)).toBe(0);
    expect(dueAfterMs(policy, "1-0", 5)).toBe(600_000);
    expect(dueAfterMs(backoffPolicy(monitor), "1-0", 6)).toBe(600_000);
    const { refresher, metrics } = createTestRefresher(fixture.redis, [group]);
    await refresher.refresh();
    expect(await gaugeValue(metrics.pendingDueEntries, { stream, group: "workers" })).toBe(1);
  });
});
