import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Redis } from "ioredis";
import { detectCapabilities } from "../../src/redis/detectCapabilities.js";
import { startRedis, uniquePrefix, type RedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { waitFor } from "../support/waitFor.js";
import { createTestSampler } from "./statusHarness.js";

/**
 * Redis before 7.4 writes a consumer's XREADGROUP to its AOF (and to replicas) as XCLAIM ...
 * LASTID, which moves the group's last-delivered id but not its entries-read counter
 * (redis/redis#12898). After a restart from the AOF, a group that read everything keeps a stale
 * counter, so XINFO GROUPS reports a lag that no entry in the stream backs: "lag 20 -> 20" for a
 * group with nothing left to read. That is not a stalled group.
 */
let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  server = await startRedis(["--appendonly", "yes", "--appendfsync", "always"]);
  redis = server.client();
});
afterAll(async () => {
  await server.stop();
});

async function readAll(stream: string): Promise<void> {
  const reply = (await redis.call(
    "XREADGROUP",
    "GROUP",
    "workers",
    "c1",
    "COUNT",
    1000,
    "STREAMS",
    stream,
    ">",
  )) as [string, [string, string[]][]][] | null;
  const ids = reply?.[0]?.[1].map(([id]) => id) ?? [];
  if (ids.length > 0) await redis.xack(stream, "workers", ...ids);
}

async function add(stream: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) await redis.xadd(stream, "*", "n", String(i));
}

async function xrangeCalls(): Promise<number> {
  const stats = await redis.info("commandstats");
  return Number(/cmdstat_xrange:calls=(\d+)/u.exec(stats)?.[1] ?? 0);
}

/** A base file with a valid counter, then reads that only the AOF's tail records. */
async function rewriteAof(): Promise<void> {
  await redis.call("BGREWRITEAOF");
  await waitFor(async () => {
    const info = await redis.info("persistence");
    return /aof_rewrite_in_progress:0/u.test(info) && /aof_rewrite_scheduled:0/u.test(info);
  });
}

describe("a lag the stream does not back (stale entries-read after an AOF restart)", () => {
  it("reads UNKNOWN, naming the counter, not STALL, for a group that read everything", async () => {
    const stream = uniquePrefix("stale-counter");
    await redis.xgroup("CREATE", stream, "workers", "0", "MKSTREAM");
    await add(stream, 10);
    await readAll(stream);
    await rewriteAof();
    await add(stream, 20);
    await readAll(stream);
    await server.restart();
    await waitFor(async () => (await redis.ping().catch(() => "")) === "PONG");
    const [group] = (await redis.call("XINFO", "GROUPS", stream)) as unknown[][];
    const fields = new Map<string, unknown>();
    for (let i = 0; i + 1 < (group?.length ?? 0); i += 2)
      fields.set(String(group?.[i]), group?.[i + 1]);
    const capabilities = await detectCapabilities(redis);
    const [major = 0, minor = 0] = capabilities.version.split(".").map(Number);
    const staleServer =
      capabilities.product === "redis" && (major < 7 || (major === 7 && minor < 4));
    // The server's own counters, as the janitor reads them: stale before 7.4, exact after.
    expect(fields.get("lag")).toBe(staleServer ? 20 : 0);

    const test = createTestSampler(redis, [groupConfig(stream)], { window: 3 });
    test.sampler.setCapabilities(capabilities);
    await redis.call("CONFIG", "RESETSTAT");
    for (let round = 0; round < 4; round += 1) {
      // A consumer keeps asking for more: seen, and nothing arrives.
      await readAll(stream);
      await test.sampler.sampleOnce();
    }
    const report = test.sampler.statusOf(groupConfig(stream).id);
    if (staleServer) {
      expect(report?.status).toBe("UNKNOWN");
      expect(report?.reason).toMatch(
        /^lag unknown: Redis reports lag 20 but no entry follows last-delivered id \S+ /u,
      );
      expect(report?.sample.lag).toBeNull();
      // One read of the stream for the position, not one per sample.
      expect(await xrangeCalls()).toBe(1);
      // The README's remedy: SETID at the same id drops the stale count, and Redis counts again.
      await redis.xgroup("SETID", stream, "workers", String(fields.get("last-delivered-id")));
      const [after] = (await redis.call("XINFO", "GROUPS", stream)) as unknown[][];
      expect(after?.[after.indexOf("lag") + 1]).toBe(0);
    } else {
      expect(report?.status).toBe("OK");
      expect(await xrangeCalls()).toBe(0);
    }
  });
});

describe("the stream's answer for a stall candidate", () => {
  it("is read once per read position, also across discovery handing over new group objects", async () => {
    const stream = uniquePrefix("lag-check-kept");
    await redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    await add(stream, 3);
    const test = createTestSampler(redis, [groupConfig(stream)], { window: 3 });
    test.sampler.setCapabilities(await detectCapabilities(redis));
    await redis.call("CONFIG", "RESETSTAT");
    for (let round = 0; round < 3; round += 1) await test.sampler.sampleOnce();
    expect(await xrangeCalls()).toBe(1);
    // A discovery scan resolves the same group again: a new object with the same id.
    for (let round = 0; round < 3; round += 1) {
      test.sampler.setGroups([{ ...groupConfig(stream) }]);
      await test.sampler.sampleOnce();
    }
    expect(await xrangeCalls()).toBe(1);
    expect(test.sampler.statusOf(groupConfig(stream).id)?.sample.lag).toBe(3);
  });
});
