import { afterEach, describe, expect, it } from "vitest";
import { Lease } from "../../src/lease/Lease.js";
import { HANG_DEADLINE_MS } from "../support/deadlines.js";
import { startDelayProxy } from "../support/delayProxy.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { waitFor } from "../support/waitFor.js";
import {
  countCommands,
  leaseConnection,
  nextEvent,
  silentLogger,
  type CommandCount,
} from "./leaseTestKit.js";

const fixture = useRedisServer();
const cleanup: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** The numbers: one-way latency 1.5 s on one replica; ttl 3000, deadline 2000, retry 500. */
const TIMING = { ttlMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 } as const;
const ONE_WAY_DELAY_MS = 1500;

async function replica(key: string, port: number): Promise<Lease & { commands: CommandCount }> {
  // As the daemon builds it: commandTimeout = retryPeriodMs, so every reply over the slow link
  // (3 s round trip) comes too late, while the command itself still lands.
  const redis = await leaseConnection({ port }, { commandTimeout: TIMING.retryPeriodMs });
  const commands = countCommands(redis);
  const lease = new Lease({ redis, key, ...TIMING, logger: silentLogger });
  cleanup.push(async () => {
    await lease.stop();
    redis.disconnect();
  });
  return Object.assign(lease, { commands });
}

/**
 * ttl + 2 retry periods, counted in the healthy replica's own acquire attempts (one per retry
 * period, plus up to 20 % jitter): the attempts that fit before the slow replica's key must have
 * expired, and two more. Counted, so that a busy machine delaying its timers cannot fail it.
 */
const ATTEMPTS_BOUND = Math.floor(TIMING.ttlMs / TIMING.retryPeriodMs) + 2;

describe("a replica behind a slow link", () => {
  it("cannot block leadership: the healthy replica leads within ttl + 2 * retry period", async () => {
    const proxy = await startDelayProxy(fixture.server.port);
    cleanup.push(() => proxy.close());
    const key = uniquePrefix("slow-link");
    // Load the scripts server-wide, as a healthy replica would have: the slow one's EVALSHA runs.
    const warmUp = await replica(uniquePrefix("warm-up"), fixture.server.port);
    await warmUp.tryAcquireOnce();
    await warmUp.stop();

    const slow = await replica(key, proxy.port);
    // The link degrades once connected (a connection set up over it would time out instead).
    proxy.setDelay(ONE_WAY_DELAY_MS);
    slow.start();
    // The slow replica's acquire lands (its reply will come too late): the key is taken.
    await waitFor(async () => (await fixture.redis.exists(key)) === 1, {
      timeoutMs: HANG_DEADLINE_MS,
      what: "the slow replica's acquire to land",
    });
    const healthy = await replica(key, fixture.server.port);
    const startedAt = performance.now();
    const acquired = nextEvent(healthy, "acquired");
    healthy.start();
    await acquired;
    // No renewal yet (they look like attempts): the count is taken at the acquisition.
    const attempts = healthy.commands.acquires();
    const elapsedMs = performance.now() - startedAt;
    console.log(
      `healthy replica led after ${elapsedMs.toFixed(0)} ms, attempt ${attempts}, behind a slow one`,
    );
    expect(attempts).toBeLessThanOrEqual(ATTEMPTS_BOUND);
    expect(healthy.isLeader).toBe(true);
    expect(slow.isLeader).toBe(false);
    // And it stays the leader: a few renewals later the slow replica has not taken over.
    for (let renewals = 0; renewals < 3; renewals += 1) await nextEvent(healthy, "renewed");
    expect(healthy.isLeader).toBe(true);
    expect(await fixture.redis.get(key)).toBe(healthy.fence?.value);
  });
});
