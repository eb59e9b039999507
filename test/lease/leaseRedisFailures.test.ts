import { afterEach, describe, expect, it } from "vitest";
import type { LeaseOptions } from "../../src/lease/types.js";
import { Lease } from "../../src/lease/Lease.js";
import { companionKey, LeaseLock } from "../../src/lease/LeaseLock.js";
import { waitFor } from "../support/waitFor.js";
import {
  startRedis,
  uniquePrefix,
  useRedisServer,
  type RedisServer,
} from "../support/redisServer.js";
import {
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

const newLease = leaseFactory(fixture, cleanup, {
  commandTimeout: 100,
  disconnectFirst: true,
});

/** Blocks every client (lease included) for `ms`; the commands already sent stay unanswered. */
async function pauseRedis(ms: number): Promise<void> {
  await fixture.redis.call("CLIENT", "PAUSE", String(ms), "ALL");
}

/**
 * Resolves with what `promise` gives, or rejects after `ms`: a deadline only to fail (a wait for
 * something another process or a timer must do), never one a passing run depends on.
 */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A Lease on a connection of its own to `server`, stopped and checked by `cleanup`. */
async function leaseOn(
  server: RedisServer,
  key: string,
  timing: Pick<LeaseOptions, "ttlMs" | "renewDeadlineMs" | "retryPeriodMs">,
  timeoutMs: number,
) {
  const redis = await leaseConnection(server, { commandTimeout: timeoutMs });
  const timers = new RecordingTimers();
  const lease = new Lease({ redis, key, ...timing, logger: silentLogger, timers });
  cleanup.push(async () => {
    redis.disconnect();
    await lease.stop();
    expect(timers.pending.size).toBe(0);
  });
  return lease;
}

// How soon the deadline fires is leaseTiming.test.ts's subject (on a driven clock). Here, on a
// real server, what counts is what ends the term, and that it ends before its key could expire:
// the TTLs are long, so that only a broken lease, never a busy machine, reaches them.
describe("Lease when Redis fails", () => {
  it("aborts the term on the local deadline while a renewal reply is outstanding", async () => {
    const own = await startRedis();
    cleanup.push(() => own.stop());
    const timing = { ttlMs: 10_000, renewDeadlineMs: 200, retryPeriodMs: 50 };
    // commandTimeout far beyond the test: the renewal is unanswered until the server resumes.
    const lease = await leaseOn(own, uniquePrefix("outstanding"), timing, 60_000);
    lease.start();
    const [term] = await nextEvent(lease, "acquired");
    const lost = nextEvent(lease, "lost");
    // Stopped, the server answers nothing: a "lost" seen before SIGCONT came from the deadline.
    own.process.kill("SIGSTOP");
    const stoppedAt = performance.now();
    let reason: string;
    try {
      [reason] = await within(lost, timing.ttlMs, "lost term while Redis is stopped");
    } finally {
      own.process.kill("SIGCONT");
    }
    expect(reason).toBe("renew-deadline");
    expect(term.signal.aborted).toBe(true);
    expect(lease.isLeader).toBe(false);
    // After the resume the late "success" must not revive the term; the old value is released
    // (compare-and-delete), so the next term starts before the old value's 10 s TTL ran out.
    const [next] = await nextEvent(lease, "acquired");
    expect(performance.now() - stoppedAt).toBeLessThan(timing.ttlMs);
    expect(term.signal.aborted).toBe(true);
    expect(next.fencingToken).toBe(term.fencingToken + 1);
    expect(next.fence.value).not.toBe(term.fence.value);
  });

  it("aborts the term on the renew deadline, before its key can expire, when Redis is killed", async () => {
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
    const timing = { ...FAST, ttlMs: 10_000 };
    const lease = new Lease({
      redis,
      key: uniquePrefix("killed"),
      ...timing,
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
    await own.kill();
    // Only the deadline timer ends a term while Redis is gone; it must do so before the key's
    // TTL could let a standby in, however late a busy machine runs the timer.
    const [reason] = await within(lost, timing.ttlMs, "lost term after the kill");
    expect(reason).toBe("renew-deadline");
    expect(term.signal.aborted).toBe(true);
  });

  it("does not wait out the TTL after an acquire reply was lost (the value is released behind it)", async () => {
    const key = uniquePrefix("lost-reply");
    // The renew deadline only has to outlast a busy machine's stalls: the lease must still hold
    // the key when it is read below (at 200 ms it was lost first once, at load 8). The TTL is
    // long: an acquisition that waited it out cannot pass for one that came after the release.
    const timing = { ttlMs: 20_000, renewDeadlineMs: 1_500, retryPeriodMs: 50 };
    const { lease } = await newLease(key, timing, 100);
    // The first attempts time out on the client (100 ms) but run when the pause ends (300 ms).
    await pauseRedis(300);
    const pausedAt = performance.now();
    lease.start();
    const [term] = await within(nextEvent(lease, "acquired"), timing.ttlMs, "acquisition");
    expect(performance.now() - pausedAt).toBeLessThan(timing.ttlMs);
    expect(term.fencingToken).toBe(1);
    expect(await fixture.redis.get(companionKey(key, "token"))).toBe("1");
    expect(await fixture.redis.get(key)).toBe(term.fence.value);
  });

  it("tryAcquireOnce rejects when Redis does not answer; stop() releases what it may hold", async () => {
    const key = uniquePrefix("once-timeout");
    const { lease, redis } = await newLease(key, {}, 100);
    // redlock sends that release as EVALSHA, and as EVAL only once it reads NOSCRIPT: behind a
    // timed-out acquire it reads nothing, so a server that never ran the release script keeps
    // the value for its TTL. A lease released once on this server first, as an earlier test
    // used to do here by chance.
    const warm = new LeaseLock(fixture.redis, uniquePrefix("warm"), 1_000);
    const warmed = await warm.acquire();
    if (warmed.status === "acquired") await warm.release(warmed.lock);
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
