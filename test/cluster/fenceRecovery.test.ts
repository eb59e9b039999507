import type { Cluster } from "ioredis";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { Maintenance } from "../../src/maintenance/Maintenance.js";
import { Supervisor } from "../../src/daemon/Supervisor.js";
import { Lease } from "../../src/lease/Lease.js";
import { companionKey } from "../../src/lease/LeaseLock.js";
import type { LeaderTerm } from "../../src/lease/types.js";
import { createMaintenanceMetrics } from "../../src/metrics/maintenanceMetrics.js";
import { createClusterClient } from "../../src/redis/createClusterClient.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { slotFenceKey } from "../../src/core/fence.js";
import { sweepAll } from "../../src/sweep/sweepAll.js";
import { clusterTestConfig } from "../support/clusterTestConfig.js";
import { DaemonProcess, writeConfigFile } from "../support/daemonProcess.js";
import { expectExactlyOnce } from "../support/expectExactlyOnce.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { useRedisCluster } from "../support/redisCluster.js";
import { uniquePrefix } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";
import { waitFor } from "../support/waitFor.js";

/** Four ttls of testConfig's lease: the bound the recovery was held to before its lease grew. */
const RECOVERY_BOUND_MS = 4 * 1500;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function pendingTotal(redis: Cluster, streams: readonly string[]): Promise<number> {
  let total = 0;
  for (const stream of streams)
    total += ((await redis.call("XPENDING", stream, "workers")) as [number])[0];
  return total;
}

describe("a fencing token that went back on Redis Cluster (three masters)", () => {
  const fixture = useRedisCluster();
  let redis: Cluster;
  beforeAll(() => {
    redis = fixture.cluster.client();
  });

  /** A Lease of the daemon's kind (per-slot fences) on a cluster client of its own. */
  function clusterLease(key: string, timings = { ttlMs: 3000, renewDeadlineMs: 2000 }): Lease {
    const client = createClusterClient({
      url: fixture.cluster.seedUrl,
      nodes: fixture.cluster.seedNodes,
      password: "",
      connectionName: "stream-janitor:lease",
      commandTimeoutMs: 500,
      logger: pino({ level: "silent" }),
      failFast: true,
    });
    const lease = new Lease({
      redis: client,
      key,
      ...timings,
      // Renewals far apart: a lease stolen in the test is not noticed by a renewal first.
      retryPeriodMs: 1000,
      logger: pino({ level: "silent" }),
      fencePerSlot: true,
    });
    cleanups.push(async () => {
      await lease.stop();
      client.disconnect();
    });
    return lease;
  }

  it("a restarted leader meets a fence above its token (token key deleted), moves past it and sweeps", async () => {
    const { cluster } = fixture;
    const prefix = uniquePrefix("token-lost");
    const leaseKey = `${prefix}:lease`;
    const tokenKey = companionKey(leaseKey, "token");
    const streams = cluster.keysOnEveryMaster(prefix);
    const config = clusterTestConfig(
      cluster,
      prefix,
      // Dead letters: requeued copies would be the next entries XREADGROUP hands out below.
      streams.map((stream) => ({ stream, action: "dead-letter" as const })),
      // A lease no stall of a busy machine takes away: the first leader keeps its one term
      // (token 42) until its graceful stop, which releases the lease at once.
      { lease: { key: leaseKey, ttlMs: 10_000, renewDeadlineMs: 7000, retryPeriodMs: 1000 } },
    );
    const file = await writeConfigFile(config);
    cleanups.push(file.remove);
    // Forty-one terms before this one: the first leader's token (42) ends up in every fence.
    await redis.set(tokenKey, "41");
    for (const stream of streams)
      await addStuckEntries(redis, stream, "workers", numberedBodies(10));
    const first = await DaemonProcess.start(file.path);
    cleanups.push(() => first.kill());
    await waitFor(async () => (await pendingTotal(redis, streams)) === 0, {
      what: "the first leader to sweep",
    });
    for (const stream of streams)
      expect(await redis.get(slotFenceKey(stream, leaseKey))).toBe("42");
    first.signal("SIGTERM");
    // A graceful stop: the lease is released (its exit code is the CLI's business).
    await first.exited;

    // The token counter is lost (an operator's DEL, or a failover before it replicated).
    await redis.del(tokenKey);
    const fresh = new Map<string, string[]>();
    for (const stream of streams)
      fresh.set(stream, await addStuckEntries(redis, stream, "workers", numberedBodies(10)));
    const second = await DaemonProcess.start(file.path);
    cleanups.push(() => second.kill());
    const acquired = await second.waitForLog(
      (line) => line.msg === "lease acquired" && line.fencingToken === 1,
    );
    await waitFor(async () => (await pendingTotal(redis, streams)) === 0, {
      timeoutMs: 20_000,
      what: `the restarted leader to sweep again (${JSON.stringify(second.logs.slice(-3))})`,
    });
    // Measured with the daemon's own log times: from its acquisition to its last stream swept.
    const swept = await waitFor(
      () => {
        const lines = second.logs.filter((l) => l.msg === "group swept" && Number(l.claimed) > 0);
        return lines.length >= streams.length ? lines : undefined;
      },
      { what: "a log line per stream swept" },
    );
    const recoveryMs = Math.max(...swept.map((l) => Number(l.time))) - Number(acquired.time);
    console.log(`swept again ${recoveryMs} ms after acquiring token 1`);
    // Within a few periods of the shared test lease (ttl 1500 ms) of its acquisition, not "never".
    expect(recoveryMs).toBeLessThan(RECOVERY_BOUND_MS);

    const moved = await second.waitForLog((line) =>
      String(line.msg).startsWith("fencing token moved"),
    );
    expect(moved).toMatchObject({ level: 40, fencingToken: 43, previousToken: 1, fenceSeen: 42 });
    expect(await second.metric("stream_janitor_fencing_token")).toBe(43);
    expect(await second.metric("stream_janitor_fencing_token_moves_total")).toBe(1);
    expect(await second.isLeader()).toBe(true);
    expect(await redis.get(tokenKey)).toBe("43");
    expect(await redis.hget(companionKey(leaseKey, "holder"), "fencingToken")).toBe("43");
    for (const stream of streams) {
      expect(await redis.get(slotFenceKey(stream, leaseKey))).toBe("43");
      await expect(
        expectExactlyOnce(redis, {
          stream,
          group: "workers",
          deadLetterStream: `{${stream}}:dead`,
          originalIds: fresh.get(stream) ?? [],
        }),
      ).resolves.toMatchObject({ deadLettered: 10 });
    }
  });

  it("a leader that holds the lease moves past a fence; its old term's writes stay refused", async () => {
    const prefix = uniquePrefix("move");
    const leaseKey = `${prefix}:lease`;
    const lease = clusterLease(leaseKey);
    const term = (await lease.tryAcquireOnce()) as LeaderTerm;
    expect(term.fencingToken).toBe(1);
    const [stream] = fixture.cluster.keysOnEveryMaster(prefix);
    const group = groupConfig(stream ?? "", { action: "dead-letter" });
    await addStuckEntries(redis, group.stream, group.group, numberedBodies(3));
    // A term whose token the counter forgot wrote here.
    await redis.set(slotFenceKey(group.stream, leaseKey), "7");
    const [refused] = await sweepAll(
      [group],
      sweepContext(redis, { fence: term.fence }),
      neverAborted,
    );
    expect(refused).toMatchObject({ errorKind: "fenced", claimed: 0, fenceSeen: 7 });

    const next = await term.moveTokenPast?.(7);
    expect(next?.fencingToken).toBe(8);
    expect(next?.fence).toMatchObject({ key: leaseKey, slotToken: 8, value: term.fence.value });
    expect(lease.term).toBe(next);
    expect(term.signal.aborted).toBe(true);
    expect(term.signal.reason).toMatchObject({ name: "LeaseLostError", reason: "superseded" });
    expect(next?.signal.aborted).toBe(false);
    expect(await redis.get(companionKey(leaseKey, "token"))).toBe("8");
    // The old term can no longer move anything: it is over.
    expect(await term.moveTokenPast?.(100)).toBeUndefined();
    expect(await redis.get(companionKey(leaseKey, "token"))).toBe("8");

    const [swept] = await sweepAll(
      [group],
      sweepContext(redis, { fence: next?.fence }),
      neverAborted,
    );
    expect(swept).toMatchObject({ deadLettered: 3 });
    expect(await redis.get(slotFenceKey(group.stream, leaseKey))).toBe("8");
    await addStuckEntries(redis, group.stream, group.group, numberedBodies(2));
    const [stale] = await sweepAll(
      [group],
      sweepContext(redis, { fence: term.fence }),
      neverAborted,
    );
    expect(stale).toMatchObject({ errorKind: "fenced", claimed: 0 });
    expect(await redis.xlen(group.deadLetterStream)).toBe(3);
  });

  it("moves past a fence met by a retention trim, on a stream no group sweeps", async () => {
    const prefix = uniquePrefix("trim-fence");
    const leaseKey = `${prefix}:lease`;
    const lease = clusterLease(leaseKey);
    const term = (await lease.tryAcquireOnce()) as LeaderTerm;
    const [stream = ""] = fixture.cluster.keysOnEveryMaster(prefix);
    for (let i = 0; i < 10; i += 1) await redis.xadd(stream, "*", "n", String(i));
    await redis.set(slotFenceKey(stream, leaseKey), "30");
    const registry = new Registry();
    const supervisor = new Supervisor({
      groups: [],
      redis: registerScripts(redis),
      logger: pino({ level: "silent" }),
      intervalMs: 60_000,
      batchSize: 100,
      maxScriptMs: 2,
      maxEntriesPerGroup: 100_000,
      consumerName: "stream-janitor",
      currentTerm: () => lease.term,
      maintenance: new Maintenance({
        redis: registerScripts(redis),
        logger: pino({ level: "silent" }),
        metrics: createMaintenanceMetrics(registry),
        retention: [{ stream, maxLen: 3, maxAgeMs: 0 }],
        janitorConsumer: "stream-janitor",
        maxTrimmedPerPass: 100_000,
      }),
    });

    await supervisor.supervise(term);

    expect(lease.term?.fencingToken).toBe(31);
    expect(term.signal.aborted).toBe(true);
    expect(await redis.get(slotFenceKey(stream, leaseKey))).toBe("31");
    expect(await redis.xlen(stream)).toBe(3);
  });

  it.each([
    ["stolen", (key: string) => redis.set(key, "thief", "PX", 10_000)],
    ["expired", (key: string) => redis.del(key)],
  ])("a deposed leader (lease %s) cannot raise the token", async (_how, depose) => {
    const prefix = uniquePrefix("deposed");
    const leaseKey = `${prefix}:lease`;
    const tokenKey = companionKey(leaseKey, "token");
    const lease = clusterLease(leaseKey);
    const term = (await lease.tryAcquireOnce()) as LeaderTerm;
    expect(typeof term.moveTokenPast).toBe("function");
    const holder = await redis.hgetall(companionKey(leaseKey, "holder"));
    await depose(leaseKey);

    expect(await term.moveTokenPast?.(50)).toBeUndefined();
    expect(await redis.get(tokenKey)).toBe(String(term.fencingToken));
    expect(await redis.hgetall(companionKey(leaseKey, "holder"))).toEqual(holder);
    // Redis said the lease is not ours: the term ends at once, not at the next renewal.
    expect(term.signal.reason).toMatchObject({ name: "LeaseLostError", reason: "lease-taken" });
    expect(lease.term).toBeUndefined();
  });

  it("a term that is over (stopped) cannot raise the token, even while the key holds its value", async () => {
    const prefix = uniquePrefix("late");
    const leaseKey = `${prefix}:lease`;
    const lease = clusterLease(leaseKey);
    const term = (await lease.tryAcquireOnce()) as LeaderTerm;
    expect(typeof term.moveTokenPast).toBe("function");
    await lease.stop();
    expect(term.signal.aborted).toBe(true);
    // stop() released the key; put our value back, as a reply lost on the way would have left it.
    await redis.set(leaseKey, term.fence.value, "PX", 10_000);
    expect(await term.moveTokenPast?.(50)).toBeUndefined();
    expect(await redis.get(companionKey(leaseKey, "token"))).toBe(String(term.fencingToken));
  });
});
