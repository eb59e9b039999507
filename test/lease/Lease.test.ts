import { afterEach, describe, expect, it } from "vitest";
import { companionKey } from "../../src/lease/LeaseLock.js";
import type { LostReason } from "../../src/lease/types.js";
import { captureLogger } from "../support/sweepHarness.js";
import { waitFor } from "../support/waitFor.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { attempts, events, FAST, nextEvent, leaseFactory } from "./leaseTestKit.js";

const fixture = useRedisServer();
const cleanup: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

const newLease = leaseFactory(fixture, cleanup);

describe("Lease", () => {
  it("elects exactly one of three instances, and only the leader has a fence", async () => {
    const key = uniquePrefix("one-leader");
    const all = await Promise.all([newLease(key), newLease(key), newLease(key)]);
    for (const { lease } of all) lease.start();
    await waitFor(() => all.some(({ lease }) => lease.isLeader));
    // Several acquire attempts of every standby later, still exactly one.
    const standbys = all.filter(({ lease }) => !lease.isLeader);
    await Promise.all(standbys.map(({ commands }) => attempts(commands, 5)));
    const leaders = all.filter(({ lease }) => lease.isLeader);
    expect(leaders).toHaveLength(1);
    const leader = leaders[0]?.lease;
    expect(leader?.fence).toEqual({ key, value: await fixture.redis.get(key) });
    expect(leader?.term?.fence).toEqual(leader?.fence);
    for (const { lease } of all) if (lease !== leader) expect(lease.fence).toBeUndefined();
  });

  it("keeps leadership over several TTLs by renewing", async () => {
    const key = uniquePrefix("renew");
    const { lease } = await newLease(key);
    const losses: LostReason[] = [];
    lease.on("lost", (reason) => losses.push(reason));
    lease.start();
    const [term] = await nextEvent(lease, "acquired");
    // Two TTLs' worth of renewals: the key would have expired twice without them.
    await events(lease, "renewed", (2 * FAST.ttlMs) / FAST.retryPeriodMs);
    expect(losses).toEqual([]);
    expect(lease.term).toBe(term);
    expect(lease.term?.signal.aborted).toBe(false);
    expect(await fixture.redis.get(key)).toBe(lease.fence?.value);
  });

  it("hands over to a standby at once when the leader stops (release)", async () => {
    const key = uniquePrefix("handover");
    const slow = { ttlMs: 5_000, renewDeadlineMs: 3_000, retryPeriodMs: 50 };
    const first = await newLease(key, slow);
    first.lease.start();
    await nextEvent(first.lease, "acquired");
    const second = await newLease(key, slow);
    second.lease.start();
    await attempts(second.commands, 3);
    expect(second.lease.isLeader).toBe(false);
    const signal = first.lease.term?.signal;
    const takeover = nextEvent(second.lease, "acquired");
    const attemptsBefore = second.commands.acquires();
    await first.lease.stop();
    expect(signal?.aborted).toBe(true);
    await takeover;
    // Released, not expired: the standby's next attempt wins (one retry period; the TTL is a
    // hundred of them). Counted in attempts, not read off a clock a busy machine slows: one
    // attempt may have reached Redis just before the release.
    expect([1, 2]).toContain(second.commands.acquires() - attemptsBefore);
  });

  it.each([
    ["deleted", (key: string) => fixture.redis.del(key)],
    ["overwritten", (key: string) => fixture.redis.set(key, "someone-else", "PX", 10_000)],
  ])("fires lost and aborts the signal when the key is %s", async (_name, steal) => {
    const key = uniquePrefix("stolen");
    const { lease, commands } = await newLease(key);
    lease.start();
    const [term] = await nextEvent(lease, "acquired");
    const lost = nextEvent(lease, "lost");
    const renewalsBefore = commands.acquires();
    await steal(key);
    const [reason, lostTerm] = await lost;
    // Found at the next renewal (one may have reached Redis just before the theft): counted in
    // renewals, not read off a clock a busy machine slows.
    expect([1, 2]).toContain(commands.acquires() - renewalsBefore);
    expect(reason).toBe("lease-taken");
    expect(lostTerm).toBe(term);
    expect(term.signal.aborted).toBe(true);
    expect(term.signal.reason).toMatchObject({ name: "LeaseLostError", reason: "lease-taken" });
  });

  it("stays standby while another value holds the key", async () => {
    const key = uniquePrefix("held");
    await fixture.redis.set(key, "someone-else", "PX", 10_000);
    const { lease, commands } = await newLease(key);
    lease.start();
    await attempts(commands, 5);
    expect(lease.isLeader).toBe(false);
    expect(await fixture.redis.get(key)).toBe("someone-else");
  });

  it("logs a lease key left with no TTL at error, naming its value, once per minute", async () => {
    const key = uniquePrefix("no-ttl");
    await fixture.redis.set(key, "left-by-hand", "PX", 60_000);
    let clock = 1_000;
    const { logger, lines } = captureLogger();
    const { lease, commands } = await newLease(key, { logger, now: () => clock });
    const errors = () => lines.filter((line) => line.level === 50);
    lease.start();
    // Held by another value that expires: an ordinary standby, nothing to report at error.
    await attempts(commands, 3);
    expect(errors()).toEqual([]);

    // The same value without a TTL (PERSIST, or a SET by hand) blocks every janitor for good.
    await fixture.redis.persist(key);
    await attempts(commands, 3);
    expect(errors()).toHaveLength(1);
    expect(errors()[0]).toMatchObject({ key, value: "left-by-hand", pttlMs: -1 });
    expect(errors()[0]?.msg).toContain('"left-by-hand"');
    expect(errors()[0]?.msg).toContain("no TTL");

    // Retried every retry period, but said once per minute (of the injected clock).
    clock += 59_999;
    await attempts(commands, 3);
    expect(errors()).toHaveLength(1);
    clock += 1;
    await attempts(commands, 3);
    expect(errors()).toHaveLength(2);

    // Cleared as the runbook says: the next attempt acquires it.
    const acquired = nextEvent(lease, "acquired");
    await fixture.redis.del(key);
    await acquired;
    expect(errors()).toHaveLength(2);
  });

  it("increases the fencing token with every acquisition", async () => {
    const key = uniquePrefix("token");
    const a = await newLease(key);
    const b = await newLease(key);
    a.lease.start();
    const [first] = await nextEvent(a.lease, "acquired");
    b.lease.start();
    const secondAcquired = nextEvent(b.lease, "acquired");
    await a.lease.stop();
    const [second] = await secondAcquired;
    const thirdAcquired = nextEvent(b.lease, "acquired");
    await fixture.redis.del(key);
    const [third] = await thirdAcquired;
    expect([first.fencingToken, second.fencingToken, third.fencingToken]).toEqual([1, 2, 3]);
    expect(await fixture.redis.get(companionKey(key, "token"))).toBe("3");
  });

  it("tryAcquireOnce: undefined while held, else a term renewed until stop()", async () => {
    const key = uniquePrefix("once");
    const holder = await newLease(key);
    holder.lease.start();
    await nextEvent(holder.lease, "acquired");
    const oneShot = await newLease(key);
    expect(await oneShot.lease.tryAcquireOnce()).toBeUndefined();
    expect(() => oneShot.lease.start()).toThrow(/after tryAcquireOnce/);
    await holder.lease.stop();
    const term = await oneShot.lease.tryAcquireOnce();
    expect(term?.fencingToken).toBe(2);
    expect(await oneShot.lease.tryAcquireOnce()).toBe(term);
    await events(oneShot.lease, "renewed", (2 * FAST.ttlMs) / FAST.retryPeriodMs);
    expect(term?.signal.aborted).toBe(false);
    expect(await fixture.redis.get(key)).toBe(term?.fence.value);
    await oneShot.lease.stop();
    expect(term?.signal.aborted).toBe(true);
    expect(await fixture.redis.exists(key)).toBe(0);
  });
});
