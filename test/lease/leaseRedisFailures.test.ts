import { afterEach, describe, expect, it } from "vitest";
import { Lease } from "../../src/lease/Lease.js";
import { companionKey } from "../../src/lease/LeaseLock.js";
import { waitFor } from "../support/waitFor.js";
import { startRedis, uniquePrefix, useRedisServer } from "../support/redisServer.js";
import {
  BUSY_MARGIN_MS,
  FAST,
  leaseConnection,
  nextEvent,
  RecordingTimers,
  silentLogger,
  leaseFactory,
} from "./leaseTestKit.js";

const fixture = useRedisServer();
const cleanup: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** Margin for timer latency on a busy two-core machine. */
const MARGIN_MS = BUSY_MARGIN_MS;

const newLease = leaseFactory(fixture, cleanup, {
  commandTimeout: 100,
  disconnectFirst: true,
});

/** Blocks every client (lease included) for `ms`; the commands already sent stay unanswered. */
async function pauseRedis(ms: number): Promise<void> {
  await fixture.redis.call("CLIENT", "PAUSE", String(ms), "ALL");
}

describe("Lease when Redis fails", () => {
  it("aborts the term on the local deadline while a renewal reply is outstanding", async () => {
    const key = uniquePrefix("outstanding");
    const timing = { ttlMs: 3_000, renewDeadlineMs: 200, retryPeriodMs: 50 };
    // commandTimeout far beyond the pause: the renewal is still unanswered when the deadline hits.
    const { lease } = await newLease(key, timing, 2_000);
    lease.start();
    const [term] = await nextEvent(lease, "acquired");
    const lost = nextEvent(lease, "lost");
    const pausedAt = performance.now();
    await pauseRedis(600);
    const [reason] = await lost;
    const elapsed = performance.now() - pausedAt;
    expect(reason).toBe("renew-deadline");
    expect(term.signal.aborted).toBe(true);
    expect(elapsed).toBeLessThan(timing.renewDeadlineMs + MARGIN_MS);
    expect(lease.isLeader).toBe(false);
    // After the pause the late "success" must not revive the term; the old value is released
    // (compare-and-delete), so the next term starts at once instead of after the 3 s TTL.
    const [next] = await nextEvent(lease, "acquired");
    expect(performance.now() - pausedAt).toBeLessThan(600 + 500);
    expect(term.signal.aborted).toBe(true);
    expect(next.fencingToken).toBe(term.fencingToken + 1);
    expect(next.fence.value).not.toBe(term.fence.value);
  });

  it("aborts the term within renewDeadlineMs when Redis is killed", async () => {
    const own = await startRedis();
    cleanup.push(() => own.stop());
    // Default reconnect and retry behaviour, commandTimeout well past the deadline: commands
    // wait for a fixture.server that is gone, the deadline timer must not.
    const redis = await leaseConnection(own, {
      commandTimeout: 500,
      maxRetriesPerRequest: 20,
      autoResendUnfulfilledCommands: true,
      retryStrategy: (times) => Math.min(times * 50, 2_000),
    });
    const timers = new RecordingTimers();
    const lease = new Lease({
      redis,
      key: uniquePrefix("killed"),
      ...FAST,
      logger: silentLogger,
      timers,
    });
    cleanup.push(async () => {
      redis.disconnect();
      await lease.stop();
      expect(timers.pending.size).toBe(0);
    });
    lease.start();
    const [term] = await nextEvent(lease, "acquired");
    const lost = nextEvent(lease, "lost");
    const killedAt = performance.now();
    await own.kill();
    const [reason] = await lost;
    expect(reason).toBe("renew-deadline");
    expect(term.signal.aborted).toBe(true);
    expect(performance.now() - killedAt).toBeLessThan(FAST.renewDeadlineMs + MARGIN_MS);
  });

  it("does not wait out the TTL after an acquire reply was lost (the value is released behind it)", async () => {
    const key = uniquePrefix("lost-reply");
    // The renew deadline only has to outlast a busy machine's stalls: the lease must still hold
    // the key when it is read below (at 200 ms it was lost first once, at load 8).
    const timing = { ttlMs: 5_000, renewDeadlineMs: 1_500, retryPeriodMs: 50 };
    const { lease } = await newLease(key, timing, 100);
    // The first attempts time out on the client (100 ms) but run when the pause ends (300 ms).
    await pauseRedis(300);
    const pausedAt = performance.now();
    lease.start();
    const [term] = await nextEvent(lease, "acquired");
    expect(performance.now() - pausedAt).toBeLessThan(1_000);
    expect(term.fencingToken).toBe(1);
    expect(await fixture.redis.get(companionKey(key, "token"))).toBe("1");
    expect(await fixture.redis.get(key)).toBe(term.fence.value);
  });

  it("tryAcquireOnce rejects when Redis does not answer; stop() releases what it may hold", async () => {
    const key = uniquePrefix("once-timeout");
    const { lease, redis } = await newLease(key, {}, 100);
    await pauseRedis(200);
    await expect(lease.tryAcquireOnce()).rejects.toThrow(/timed out/i);
    // The timed-out attempt ran when the pause ended, and redlock's release of its value right
    // behind it: once the same connection answers PING, nothing of ours is held.
    await waitFor(
      () =>
        redis.ping().then(
          () => true,
          () => false,
        ),
      { what: "the pause to end" },
    );
    expect(await fixture.redis.exists(key)).toBe(0);
    await lease.stop();
    expect(await fixture.redis.exists(key)).toBe(0);
  });

  it("stop() during an acquire in flight awaits it and releases the lease", async () => {
    const key = uniquePrefix("stop-in-flight");
    const { lease } = await newLease(key, { ttlMs: 5_000 }, 1_000);
    let acquired = false;
    lease.on("acquired", () => (acquired = true));
    await pauseRedis(150);
    lease.start();
    await lease.stop();
    expect(acquired).toBe(false);
    expect(await fixture.redis.exists(key)).toBe(0);
    expect(await fixture.redis.get(companionKey(key, "token"))).toBe("1");
  });
});
