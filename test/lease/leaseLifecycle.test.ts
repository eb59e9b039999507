import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../support/waitFor.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { attempts, FAST, nextEvent, RecordingTimers, leaseFactory } from "./leaseTestKit.js";

const fixture = useRedisServer();
const cleanup: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

const newLease = leaseFactory(fixture, cleanup);

describe("Lease lifecycle", () => {
  it("after stop(), leader and standby leave no timer and send no command", async () => {
    const key = uniquePrefix("no-leak");
    const leader = await newLease(key);
    const standby = await newLease(key);
    leader.lease.start();
    await nextEvent(leader.lease, "acquired");
    standby.lease.start();
    await attempts(standby.commands, 2);

    for (const { lease, timers } of [leader, standby]) {
      const first = lease.stop();
      expect(lease.stop()).toBe(first); // idempotent: the same shutdown
      await first;
      await lease.stop();
      expect(timers.pending.size).toBe(0);
    }
    const sent = [leader.commands.count, standby.commands.count];
    // Let four retry periods pass, measured by a witness standby's attempts on a held key.
    const witnessKey = uniquePrefix("witness");
    await fixture.redis.set(witnessKey, "someone-else", "PX", 60_000);
    const witness = await newLease(witnessKey);
    witness.lease.start();
    await attempts(witness.commands, 4);
    expect([leader.commands.count, standby.commands.count]).toEqual(sent);
    expect(leader.lease.isLeader).toBe(false);
  });

  it("start() twice runs a single acquire loop", async () => {
    const key = uniquePrefix("single-loop");
    await fixture.redis.set(key, "someone-else", "PX", 10_000);
    const { lease, commands } = await newLease(key, { random: () => 0 });
    const startedAt = performance.now();
    lease.start();
    lease.start();
    await attempts(commands, 6);
    const periods = (performance.now() - startedAt) / FAST.retryPeriodMs;
    // Two loops would make two attempts per period.
    const made = commands.acquires();
    expect(made).toBeLessThanOrEqual(Math.ceil(periods) + 1);
  });

  it("refuses start() after stop() and mixing start() with tryAcquireOnce()", async () => {
    const { lease } = await newLease(uniquePrefix("misuse"));
    lease.start();
    await expect(lease.tryAcquireOnce()).rejects.toThrow(/after start/);
    await lease.stop();
    expect(() => lease.start()).toThrow(/after stop/);
  });

  it("waits retryPeriodMs plus up to 20 % jitter between standby attempts", async () => {
    const key = uniquePrefix("jitter");
    await fixture.redis.set(key, "someone-else", "PX", 10_000);
    const periods: number[] = [];
    const timers = new RecordingTimers();
    const recording = {
      setTimeout: (callback: () => void, ms: number) => {
        periods.push(ms);
        return timers.setTimeout(callback, ms);
      },
      clearTimeout: (handle: unknown) => timers.clearTimeout(handle),
    };
    const { lease } = await newLease(key, { random: () => 0.999, timers: recording });
    lease.start();
    await waitFor(() => periods.length >= 2);
    expect(periods[0]).toBeCloseTo(FAST.retryPeriodMs * 1.2, 0);
  });
});
