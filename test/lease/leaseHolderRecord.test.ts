import { describe, expect, it } from "vitest";
import { companionKey, LeaseLock } from "../../src/lease/LeaseLock.js";
import { leaseCommands, leaseInspection } from "../../src/operations/inspectLease.js";
import { runPipeline } from "../../src/redis/pipeline/runPipeline.js";
import { readLeaseState } from "../../src/reads/readLeaseState.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";

const fixture = useRedisServer();

/** A lease key holding `value`, with a holder record of `fields` (as an operator might find it). */
async function leaseWithRecord(name: string, fields: Record<string, string>): Promise<string> {
  const key = uniquePrefix(name);
  await fixture.redis.set(key, "v1");
  await fixture.redis.hset(companionKey(key, "holder"), { value: "v1", ...fields });
  return key;
}

/** The holder as the lease, the web console and `inspect` each read it. */
async function threeReadings(key: string) {
  const lock = await new LeaseLock(fixture.redis, key, 5_000).holder();
  const console_ = await readLeaseState(fixture.redis, key);
  const replies = await runPipeline(fixture.redis, leaseCommands(key));
  return { lock, console_, inspect: leaseInspection(key, replies) };
}

describe("the lease holder record: the lease, the console and inspect read it alike", () => {
  it.each([
    ["a whole pid", "4242"],
    ["a pid in hex", "0x2a"],
    ["a pid with a space", " 42"],
    ["a pid with a fraction", "42.5"],
  ])("%s", async (_, pid) => {
    const key = await leaseWithRecord("holder-pid", {
      host: "janitor-1",
      pid,
      fencingToken: "7",
      acquiredAtMs: "1700000000000",
    });
    const { lock, console_, inspect } = await threeReadings(key);
    if (typeof lock !== "object" || console_.status !== "held") throw new Error("not held");
    expect(console_).toMatchObject({ host: lock.host, fencingToken: 7 });
    expect(Object.is(console_.pid, lock.pid)).toBe(true);
    expect(inspect.holderHost).toBe(lock.host);
    // inspect leaves out a pid it cannot read; what it shows is what the lease reads.
    expect(inspect.holderPid).toBe(Number.isNaN(lock.pid) ? undefined : lock.pid);
    expect(lock.pid).toBe(/^\d+$/u.test(pid) ? Number(pid) : Number.NaN);
  });

  it("a record without a host, or of another value, is read alike", async () => {
    const hostless = await threeReadings(await leaseWithRecord("holder-hostless", { pid: "9" }));
    expect(hostless.lock).toMatchObject({ host: "?", pid: 9 });
    expect(hostless.console_).toMatchObject({ status: "held", host: "?", pid: 9 });
    expect(hostless.inspect.holderHost).toBeUndefined();
    expect(hostless.inspect.holderPid).toBe(9);
    const key = await leaseWithRecord("holder-stale", { host: "old", pid: "1" });
    await fixture.redis.set(key, "v2");
    const stale = await threeReadings(key);
    expect(stale.lock).toBe("unknown");
    expect(stale.console_).toEqual({ status: "unknown" });
    expect(stale.inspect.held).toBe(true);
    expect(stale.inspect.holderHost).toBeUndefined();
  });
});
