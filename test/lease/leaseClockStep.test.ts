import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { LeaseLock } from "../../src/lease/LeaseLock.js";
import { startRedis, uniquePrefix, type RedisServer } from "../support/redisServer.js";
import { waitFor } from "../support/waitFor.js";
import { leaseConnection, leaseFactory, nextEvent } from "./leaseTestKit.js";

let server: RedisServer;
let admin: Redis;
let conn: Redis;

beforeAll(async () => {
  server = await startRedis();
  admin = server.client();
  conn = await leaseConnection(server);
});

afterAll(async () => {
  conn.disconnect();
  await server.stop();
});

const cleanup: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  vi.restoreAllMocks();
  for (const step of cleanup.splice(0).reverse()) await step();
});

const newLease = leaseFactory(
  {
    get server() {
      return server;
    },
  },
  cleanup,
);

/** The lock of an acquisition that must succeed. */
async function acquired(lock: LeaseLock) {
  const result = await lock.acquire();
  if (result.status !== "acquired") throw new Error("expected the lease to be free");
  return result.lock;
}

describe("lease validity on a monotonic clock", () => {
  it("renews after the host clock stepped forward by more than the TTL", async () => {
    const key = uniquePrefix("clock-step");
    const lock = new LeaseLock(conn, key, 5_000);
    const held = await acquired(lock);
    const realNow = Date.now.bind(Date);
    // The host's wall clock jumps 10 minutes ahead (NTP step, VM resume): the monotonic one does not.
    vi.spyOn(Date, "now").mockImplementation(() => realNow() + 600_000);
    const renewed = await lock.extend(held);
    expect(renewed?.value).toBe(held.value);
    expect(await admin.get(key)).toBe(held.value);
    expect(await admin.pttl(key)).toBeGreaterThan(4_000);
    // And again from the renewed lock, the wall clock still ahead.
    expect((await lock.extend(renewed ?? held))?.value).toBe(held.value);
  });

  it("refuses to renew once the monotonic clock says the lock expired, whatever the wall clock", async () => {
    const key = uniquePrefix("mono-expired");
    let monotonic = 1_000;
    const lock = new LeaseLock(conn, key, 5_000, () => monotonic);
    const held = await acquired(lock);
    monotonic += 5_001;
    await expect(lock.extend(held)).rejects.toThrow("Cannot extend an already-expired lock");
    // Nothing was sent: the key keeps the TTL of its acquisition.
    expect(await admin.pttl(key)).toBeLessThanOrEqual(5_000);
  });

  it("a leader whose host clock steps forward keeps the lease: no lost event, same term", async () => {
    const key = uniquePrefix("lease-step");
    const { lease } = await newLease(key);
    const lost: unknown[] = [];
    const renewedTokens: number[] = [];
    lease.on("lost", (reason) => lost.push(reason));
    lease.on("renewed", (renewed) => renewedTokens.push(renewed.fencingToken));
    lease.start();
    const [term] = await nextEvent(lease, "acquired");
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, "now").mockImplementation(() => realNow() + 600_000);
    // Several renewals with the wall clock 10 minutes ahead; a loss ends the wait at once.
    const from = renewedTokens.length;
    await waitFor(() => renewedTokens.length >= from + 4 || lost.length > 0, {
      what: "4 renewals or a loss",
    });
    expect(lost).toEqual([]);
    expect(lease.isLeader).toBe(true);
    expect(new Set(renewedTokens)).toEqual(new Set([term.fencingToken]));
    expect(await admin.pttl(key)).toBeGreaterThan(0);
  });
});
