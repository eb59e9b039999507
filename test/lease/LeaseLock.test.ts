import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { companionKey, LeaseLock } from "../../src/lease/LeaseLock.js";
import { keySlot } from "../../src/redis/keySlot.js";
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

describe("companionKey", () => {
  it("keeps companion keys in the lease key's hash slot", () => {
    expect(companionKey("stream-janitor:lease", "token")).toBe("{stream-janitor:lease}:token");
    expect(companionKey("{app}:lease", "token")).toBe("{app}:lease:token");
    // An empty tag does not count: the key hashes whole. Wrapping such a name in braces would
    // make a tag of part of it, so the companion gets a tag of the same slot instead.
    for (const odd of ["a{}b", "a}b", "{}x", "}{"])
      expect(keySlot(companionKey(odd, "token"))).toBe(keySlot(odd));
  });
});

describe("LeaseLock", () => {
  it("acquires a free key with a new fencing token, refuses a held one", async () => {
    const key = uniquePrefix("acquire");
    const lock = new LeaseLock(conn, key, 5_000);
    expect(await lock.acquire("a")).toEqual({ status: "acquired", fencingToken: 1 });
    expect(await lock.acquire("b")).toEqual({ status: "held" });
    expect(await admin.get(key)).toBe("a");
    await admin.del(key);
    expect(await lock.acquire("b")).toEqual({ status: "acquired", fencingToken: 2 });
    expect(await admin.get(lock.tokenKey)).toBe("2");
  });

  it("adopts its own value (a lost reply) without a new token, refreshing the TTL", async () => {
    const key = uniquePrefix("adopt");
    const lock = new LeaseLock(conn, key, 5_000);
    await lock.acquire("mine");
    await admin.pexpire(key, 50);
    expect(await lock.acquire("mine")).toEqual({ status: "adopted", fencingToken: 1 });
    expect(await admin.pttl(key)).toBeGreaterThan(4_000);
    expect(await admin.get(lock.tokenKey)).toBe("1");
  });

  it("extends only its own value, and says false (not an error) when the key is gone", async () => {
    const key = uniquePrefix("extend");
    const lock = new LeaseLock(conn, key, 5_000);
    await lock.acquire("mine");
    await admin.pexpire(key, 100);
    expect(await lock.extend("mine")).toBe(true);
    expect(await admin.pttl(key)).toBeGreaterThan(4_000);
    expect(await lock.extend("theirs")).toBe(false);
    await admin.del(key);
    expect(await lock.extend("mine")).toBe(false);
    expect(await admin.exists(key)).toBe(0);
  });

  it("releases by compare-and-delete", async () => {
    const key = uniquePrefix("release");
    const lock = new LeaseLock(conn, key, 5_000);
    await lock.acquire("mine");
    expect(await lock.release("theirs")).toBe(false);
    expect(await admin.get(key)).toBe("mine");
    expect(await lock.release("mine")).toBe(true);
    expect(await admin.exists(key)).toBe(0);
  });

  it("rejects (unknown outcome) instead of saying 'not ours' when Redis does not answer", async () => {
    const key = uniquePrefix("no-answer");
    const lock = new LeaseLock(conn, key, 5_000);
    await lock.acquire("mine");
    await admin.call("CLIENT", "PAUSE", "300", "ALL");
    await expect(lock.extend("mine")).rejects.toThrow(/timed out/i);
    await expect(lock.acquire("other")).rejects.toThrow(/timed out/i);
  });
});
