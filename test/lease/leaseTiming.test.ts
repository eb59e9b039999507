import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Lease } from "../../src/lease/Lease.js";
import type { LeaderTerm, LeaseOptions, LostReason } from "../../src/lease/types.js";
import { createJanitorMetrics } from "../../src/metrics/janitorMetrics.js";
import type { RedisClient } from "../../src/redis/RedisClient.js";
import { FakeLeaseLock } from "./FakeLeaseLock.js";
import { events, FAST, silentLogger } from "./leaseTestKit.js";

/** Never used: the fake lock stands in for Redis (WAIT is off). */
const noRedis = {} as RedisClient;

/** A Lease on a fake lock, driven by vitest's fake timers (its clock is Date.now, faked too). */
function fakeLease(overrides: Partial<LeaseOptions> = {}) {
  const lock = new FakeLeaseLock();
  const lease = new Lease({
    redis: noRedis,
    key: "lease",
    ...FAST,
    logger: silentLogger,
    lock,
    now: () => Date.now(),
    random: () => 0,
    ...overrides,
  });
  const lost: LostReason[] = [];
  const renewed: LeaderTerm[] = [];
  lease.on("lost", (reason) => lost.push(reason));
  lease.on("renewed", (term) => renewed.push(term));
  stops.push(async () => {
    lock.failPending();
    await lease.stop();
  });
  return { lease, lock, lost, renewed };
}

const stops: (() => Promise<void>)[] = [];

/** Lets `ms` of fake time pass, running the timers due and the promises they start. */
const elapse = (ms: number) => vi.advanceTimersByTimeAsync(ms);

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  expect(vi.getTimerCount()).toBe(0);
  vi.useRealTimers();
});

describe("Lease timing rule (checked by the Lease itself)", () => {
  const build = (timings: Partial<LeaseOptions>) => () =>
    new Lease({
      redis: noRedis,
      key: "k",
      ...FAST,
      logger: silentLogger,
      lock: new FakeLeaseLock(),
      ...timings,
    });

  it("refuses ttlMs not above renewDeadlineMs, naming both", () => {
    expect(build({ ttlMs: 1000, renewDeadlineMs: 1000 })).toThrow(RangeError);
    expect(build({ ttlMs: 999, renewDeadlineMs: 1000 })).toThrow(
      /ttlMs \(999\) must be more than renewDeadlineMs \(1000\)/,
    );
  });

  it("refuses renewDeadlineMs not above 1.2 * retryPeriodMs, in exact arithmetic", () => {
    // 1.2 * 5 = 6 exactly: equal is refused, one more is accepted.
    expect(build({ renewDeadlineMs: 6, retryPeriodMs: 5 })).toThrow(
      /renewDeadlineMs \(6\) must be more than 1.2 \* retryPeriodMs \(6\)/,
    );
    expect(build({ renewDeadlineMs: 7, retryPeriodMs: 5 })).not.toThrow();
    // 1.2 * 3 is 3.5999999999999996 in floating point; 3.6 must still be refused.
    expect(build({ renewDeadlineMs: 3.6, retryPeriodMs: 3 })).toThrow(/1.2 \* retryPeriodMs/);
    expect(build({ ttlMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 833 })).not.toThrow();
    expect(build({ ttlMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 834 })).toThrow(RangeError);
  });

  it("refuses timings that are not positive numbers", () => {
    expect(build({ retryPeriodMs: 0 })).toThrow(/retryPeriodMs must be a positive/);
    expect(build({ ttlMs: Number.NaN })).toThrow(/ttlMs must be a positive/);
    expect(build({ renewDeadlineMs: -1 })).toThrow(/renewDeadlineMs must be a positive/);
  });

  it("refuses before it starts anything: no timer, no lock call", () => {
    const lock = new FakeLeaseLock();
    expect(() => fakeLease({ lock, ttlMs: 100, renewDeadlineMs: 100 })).toThrow(RangeError);
    expect(lock.calls).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("Lease renewals and deadline (fake timers, fake lock)", () => {
  it("renews every retryPeriodMs, counted from when the last renewal was sent", async () => {
    const { lease, lock, renewed, lost } = fakeLease();
    lease.start();
    await elapse(0);
    expect(lease.isLeader).toBe(true);
    const extends_ = () => lock.calls.filter((call) => call === "extend").length;
    await elapse(FAST.retryPeriodMs - 1);
    expect(extends_()).toBe(0);
    await elapse(1);
    expect(extends_()).toBe(1);
    // Two TTLs' worth of fake time: one renewal per period, the term unchanged.
    await elapse(2 * FAST.ttlMs - FAST.retryPeriodMs);
    expect(extends_()).toBe((2 * FAST.ttlMs) / FAST.retryPeriodMs);
    expect(renewed).toHaveLength(extends_());
    expect(lost).toEqual([]);
    expect(lease.term?.signal.aborted).toBe(false);
  });

  it("stops acting exactly renewDeadlineMs after the acquisition was sent while a renewal hangs", async () => {
    const { lease, lock, lost } = fakeLease();
    lock.extendAnswer = "pending";
    lease.start();
    await elapse(0);
    const term = lease.term;
    await elapse(FAST.renewDeadlineMs - 1);
    // One renewal sent, unanswered: no second one queues behind it.
    expect(lock.pending).toHaveLength(1);
    expect(lease.isLeader).toBe(true);
    expect(term?.signal.aborted).toBe(false);
    await elapse(1);
    expect(lost).toEqual(["renew-deadline"]);
    expect(lease.isLeader).toBe(false);
    expect(term?.signal.reason).toMatchObject({ name: "LeaseLostError", reason: "renew-deadline" });
  });

  it("counts the deadline from when a successful renewal was sent, not from its answer", async () => {
    const { lease, lock, lost, renewed } = fakeLease();
    lock.extendAnswer = "pending";
    lease.start();
    await elapse(FAST.retryPeriodMs); // the first renewal is sent at 100 ms
    await elapse(300);
    lock.answerOldest(); // answered at 400 ms: the deadline moves to 100 + 1000
    await elapse(0);
    expect(renewed).toHaveLength(1);
    await elapse(FAST.renewDeadlineMs - 300 - 1); // 1099 ms
    expect(lost).toEqual([]);
    await elapse(1); // 1100 ms
    expect(lost).toEqual(["renew-deadline"]);
  });

  it("does not let a late success revive a term whose deadline passed", async () => {
    const { lease, lock, lost, renewed } = fakeLease();
    lock.extendAnswer = "pending";
    lease.start();
    await elapse(0);
    const term = lease.term;
    await elapse(FAST.renewDeadlineMs);
    expect(lost).toEqual(["renew-deadline"]);
    lock.extendAnswer = "renewed";
    lock.answerOldest();
    await elapse(0);
    expect(renewed).toEqual([]);
    expect(term?.signal.aborted).toBe(true);
    // The old value is released (compare-and-delete), so the next attempt wins a new term.
    await elapse(FAST.retryPeriodMs * 1.2);
    expect(lease.term?.fencingToken).toBe(2);
    expect(lease.term).not.toBe(term);
  });

  it("ends the term at the first renewal that finds the key not ours", async () => {
    const { lease, lock, lost } = fakeLease();
    lease.start();
    await elapse(0);
    lock.extendAnswer = "taken";
    await elapse(FAST.retryPeriodMs - 1);
    expect(lost).toEqual([]);
    await elapse(1);
    expect(lost).toEqual(["lease-taken"]);
  });

  it("tries to acquire every retryPeriodMs plus its jitter while another holds the lease", async () => {
    const { lease, lock } = fakeLease({ random: () => 0.5 });
    lock.heldBy = "someone-else";
    lease.start();
    await elapse(0);
    const acquires = () => lock.calls.filter((call) => call === "acquire").length;
    expect(acquires()).toBe(1);
    await elapse(FAST.retryPeriodMs * 1.1 - 1);
    expect(acquires()).toBe(1);
    await elapse(1);
    expect(acquires()).toBe(2);
    await elapse(FAST.retryPeriodMs * 1.1);
    expect(acquires()).toBe(3);
    expect(lease.isLeader).toBe(false);
  });

  it("keeps its own gauges: leader and fencing token follow its terms", async () => {
    const metrics = createJanitorMetrics(new Registry(), "test");
    const value = async (gauge: typeof metrics.leader) => (await gauge.get()).values[0]?.value;
    const { lease, lock } = fakeLease({ metrics });
    lock.extendAnswer = "pending";
    expect(await value(metrics.leader)).toBe(0);
    lease.start();
    await elapse(0);
    expect(await value(metrics.leader)).toBe(1);
    expect(await value(metrics.fencingToken)).toBe(1);
    await elapse(FAST.renewDeadlineMs);
    expect(await value(metrics.leader)).toBe(0);
    expect(await value(metrics.fencingToken)).toBe(1);
  });

  it("leaves no timer behind after stop(), leader or standby", async () => {
    const leader = fakeLease();
    const standby = fakeLease();
    standby.lock.heldBy = "someone-else";
    leader.lease.start();
    standby.lease.start();
    await elapse(3 * FAST.retryPeriodMs);
    expect(vi.getTimerCount()).toBeGreaterThan(0);
    await leader.lease.stop();
    await standby.lease.stop();
    expect(vi.getTimerCount()).toBe(0);
    expect(leader.lock.heldBy).toBeUndefined(); // released on stop
  });

  // From leaseLifecycle.test.ts, where it waited two real TTLs on Redis.
  it("a listener that throws does not break renewal", async () => {
    const { lease } = fakeLease();
    lease.on("acquired", () => {
      throw new Error("listener bug");
    });
    lease.start();
    await elapse(0);
    const term = lease.term;
    const renewals = events(lease, "renewed", (2 * FAST.ttlMs) / FAST.retryPeriodMs);
    await elapse(2 * FAST.ttlMs);
    await renewals;
    expect(lease.term).toBe(term);
    expect(term?.signal.aborted).toBe(false);
  });
});
