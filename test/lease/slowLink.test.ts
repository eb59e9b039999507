import { afterEach, describe, expect, it } from "vitest";
import { Lease } from "../../src/lease/Lease.js";
import { startDelayProxy } from "../support/delayProxy.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { waitFor } from "../support/waitFor.js";
import { leaseConnection, nextEvent, silentLogger } from "./leaseTestKit.js";

const fixture = useRedisServer();
const cleanup: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** The numbers: one-way latency 1.5 s on one replica; ttl 3000, deadline 2000, retry 500. */
const TIMING = { ttlMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 } as const;
const ONE_WAY_DELAY_MS = 1500;

async function replica(key: string, port: number): Promise<Lease> {
  // As the daemon builds it: commandTimeout = retryPeriodMs, so every reply over the slow link
  // (3 s round trip) comes too late, while the command itself still lands.
  const redis = await leaseConnection({ port }, { commandTimeout: TIMING.retryPeriodMs });
  const lease = new Lease({ redis, key, ...TIMING, logger: silentLogger });
  cleanup.push(async () => {
    await lease.stop();
    redis.disconnect();
  });
  return lease;
}

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
      timeoutMs: 4 * ONE_WAY_DELAY_MS,
      what: "the slow replica's acquire to land",
    });
    const healthy = await replica(key, fixture.server.port);
    const startedAt = performance.now();
    const acquired = nextEvent(healthy, "acquired");
    healthy.start();
    await acquired;
    const elapsedMs = performance.now() - startedAt;
    console.log(`healthy replica led after ${elapsedMs.toFixed(0)} ms behind a slow one`);
    expect(elapsedMs).toBeLessThan(TIMING.ttlMs + 2 * TIMING.retryPeriodMs);
    expect(healthy.isLeader).toBe(true);
    expect(slow.isLeader).toBe(false);
    // And it stays the leader: a few renewals later the slow replica has not taken over.
    for (let renewals = 0; renewals < 3; renewals += 1) await nextEvent(healthy, "renewed");
    expect(healthy.isLeader).toBe(true);
    expect(await fixture.redis.get(key)).toBe(healthy.fence?.value);
  });
});
