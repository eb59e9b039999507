import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { LeaseLock } from "../../src/lease/LeaseLock.js";
import { startRedis, uniquePrefix, type RedisServer } from "../support/redisServer.js";
import { leaseConnection } from "./leaseTestKit.js";

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

afterEach(() => {
  vi.restoreAllMocks();
});

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
});
