import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { companionKey, LeaseLock } from "../../src/lease/LeaseLock.js";
import { keySlot } from "../../src/core/keySlot.js";
import { startRedis, uniquePrefix, type RedisServer } from "../support/redisServer.js";
import { waitFor } from "../support/waitFor.js";
import { COMMAND_TIMEOUT_MS, leaseConnection } from "./leaseTestKit.js";

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

/** The lock of an acquisition that must succeed. */
async function acquired(lock: LeaseLock) {
  const result = await lock.acquire();
  if (result.status !== "acquired") throw new Error("expected the lease to be free");
  return result;
}

describe("LeaseLock", () => {
  it("acquires a free key with a new fencing token and a holder record, refuses a held one", async () => {
    const key = uniquePrefix("acquire");
    const lock = new LeaseLock(conn, key, 5_000);
    const first = await acquired(lock);
    expect(first.fencingToken).toBe(1);
    expect(await lock.acquire()).toEqual({ status: "held" });
    expect(await admin.get(key)).toBe(first.lock.value);
    expect(await lock.holder()).toMatchObject({ pid: process.pid, fencingToken: 1 });
    await admin.del(key);
    expect(await lock.holder()).toBeUndefined();
    const second = await acquired(lock);
    expect(second.fencingToken).toBe(2);
    expect(second.lock.value).not.toBe(first.lock.value);
    expect(await admin.get(lock.tokenKey)).toBe("2");
    await admin.set(key, "written-by-someone-else");
    expect(await lock.holder()).toBe("unknown");
  });

  it("never refreshes a value it did not just write: each attempt writes a new one with SET NX PX", async () => {
    const key = uniquePrefix("no-refresh");
    const lock = new LeaseLock(conn, key, 5_000);
    const first = await acquired(lock);
    await admin.pexpire(key, 10_000_000);
    expect(await lock.acquire()).toEqual({ status: "held" });
    // The held attempt did not touch the TTL of the value in the key (the old script did).
    expect(await admin.pttl(key)).toBeGreaterThan(5_000);
    expect(await admin.get(key)).toBe(first.lock.value);
  });

  it("extends only its own value, and says undefined (not an error) when the key is gone", async () => {
    const key = uniquePrefix("extend");
    const lock = new LeaseLock(conn, key, 5_000);
    const { lock: mine } = await acquired(lock);
    await admin.pexpire(key, 100);
    const extended = await lock.extend(mine);
    expect(extended?.value).toBe(mine.value);
    expect(await admin.pttl(key)).toBeGreaterThan(4_000);
    if (extended === undefined) throw new Error("expected the extension to succeed");
    await admin.set(key, "theirs");
    expect(await lock.extend(extended)).toBeUndefined();
    await admin.del(key);
    expect(await lock.extend(extended)).toBeUndefined();
    expect(await admin.exists(key)).toBe(0);
  });

  it("releases by compare-and-delete", async () => {
    const key = uniquePrefix("release");
    const lock = new LeaseLock(conn, key, 5_000);
    const { lock: mine } = await acquired(lock);
    await admin.set(key, "theirs");
    expect(await lock.release(mine)).toBe(false);
    expect(await admin.get(key)).toBe("theirs");
    await admin.del(key);
    const { lock: again } = await acquired(lock);
    expect(await lock.release(again)).toBe(true);
    expect(await admin.exists(key)).toBe(0);
  });

  it("rejects (unknown outcome) instead of saying 'not ours' when Redis does not answer", async () => {
    const key = uniquePrefix("no-answer");
    const lock = new LeaseLock(conn, key, 5_000);
    const { lock: mine } = await acquired(lock);
    // Both calls go out at once, right after the pause starts, and each times out after
    // COMMAND_TIMEOUT_MS: a pause five times as long leaves room for a busy machine's delays.
    await admin.call("CLIENT", "PAUSE", String(5 * COMMAND_TIMEOUT_MS), "ALL");
    await Promise.all([
      expect(lock.extend(mine)).rejects.toThrow(/timed out/i),
      expect(lock.acquire()).rejects.toThrow(/timed out/i),
    ]);
    // Answered once the pause is over: the next test starts on a responsive server.
    expect(await admin.ping()).toBe("PONG");
  });

  it("an acquire whose reply was lost leaves nothing held: redlock's release runs right behind it", async () => {
    const key = uniquePrefix("lost-reply");
    const lock = new LeaseLock(conn, key, 60_000);
    await admin.call("CLIENT", "PAUSE", String(2 * COMMAND_TIMEOUT_MS), "WRITE");
    await expect(lock.acquire()).rejects.toThrow(/timed out/i);
    // The same connection answers in order: once PING does, the acquire and its release ran.
    await waitFor(
      () =>
        conn.ping().then(
          () => true,
          () => false,
        ),
      { what: "the pause to end" },
    );
    expect(await admin.exists(key)).toBe(0);
    expect(await admin.exists(lock.tokenKey)).toBe(0);
  });
  it("an acquire and its release both unanswered leave nothing held on a server that has not cached the release script", async () => {
    // After a restart, a failover or SCRIPT FLUSH the server knows no script. The first
    // acquire of a free key caches the acquire script; the release script runs only after a
    // failed one. redlock sends that release as EVALSHA and falls back to EVAL only when it reads
    // NOSCRIPT: when the release also times out, the server later answers NOSCRIPT to nobody.
    const key = uniquePrefix("uncached-release");
    const lock = new LeaseLock(conn, key, 60_000);
    await admin.script("FLUSH");
    await acquired(lock); // caches the acquire script only
    await admin.del(key);
    // A pause longer than any machine's delay, ended by hand once the acquire gave up (it does
    // after redlock's release timed out too): both commands then wait in the server's queue.
    await admin.call("CLIENT", "PAUSE", "60000", "WRITE");
    try {
      await expect(lock.acquire()).rejects.toThrow(/timed out/i);
    } finally {
      await admin.call("CLIENT", "UNPAUSE");
    }
    // The same connection answers in order: once PING does, the acquire and its release ran.
    await waitFor(
      () =>
        conn.ping().then(
          () => true,
          () => false,
        ),
      { what: "the queued commands to run" },
    );
    expect(await admin.exists(key)).toBe(0);
  });
});
