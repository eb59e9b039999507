import type { Redis } from "ioredis";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { plainRedisConfig } from "../../src/config/defaultConfig.js";
import { Lease } from "../../src/lease/Lease.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { DaemonProcess, writeConfigFile } from "../support/daemonProcess.js";
import { expectExactlyOnce } from "../support/expectExactlyOnce.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix } from "../support/redisServer.js";
import { MASTER_NAME, SentinelSet } from "../support/sentinelSet.js";
import { monitorCommands } from "../support/monitorFeed.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";
import { defaultDeadLetterStream } from "../../src/core/resolveGroup.js";
import { runSweepPage } from "../../src/scripts/sweepPage.js";
import { groupConfig } from "../support/sweepHarness.js";

let set: SentinelSet;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  set = await SentinelSet.start();
}, 60_000);
afterAll(async () => {
  await set.stop();
});
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

const LEASE = { ttlMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 };
/** The bound: the lease is back (and sweeps resume) within ttl + 2 retry periods. */
const RESUME_BOUND_MS = LEASE.ttlMs + 2 * LEASE.retryPeriodMs;
/**
 * The same bound in the daemon's lease steps (renewals and acquire attempts, one retry period
 * apart at least), as the new primary saw them from the promotion to its first sweep script:
 * the steps that fit in it, and one attempt sent at once after a term ended.
 * Counted, because a busy machine delays the daemon's timers: at load 16 the first sweep came
 * 2,204 ms after the promotion by the clock, against RESUME_BOUND_MS.
 */
const RESUME_STEPS = Math.floor(RESUME_BOUND_MS / LEASE.retryPeriodMs) + 2;

/** Redlock's acquire and extend scripts on `key` (one key, a value, a duration): lease steps. */
function isLeaseStep(call: readonly string[], key: string): boolean {
  const [name = "", , keys, first] = call;
  return /^eval(sha)?$/iu.test(name) && keys === "1" && first === key && call.length === 6;
}

/** A script call that names `stream` among its words: the sweep's, on that server. */
function isScriptOn(call: readonly string[], stream: string): boolean {
  return /^eval(sha)?$/iu.test(call[0] ?? "") && call.includes(stream);
}
const STUCK = 3000;

async function sentinelDaemon(prefix: string): Promise<DaemonProcess> {
  const config = testConfig(`redis://${MASTER_NAME}`, prefix, [{ minIdleMs: 600_000 }], {
    redis: {
      ...plainRedisConfig(`redis://${MASTER_NAME}`),
      mode: "sentinel",
      nodes: set.sentinelNodes,
      masterName: MASTER_NAME,
    },
    lease: { key: `${prefix}:lease`, ...LEASE },
    // Small pages and a small budget per sweep: the stuck entries take several seconds to drain,
    // so the failover lands in the middle of them.
    sweep: {
      intervalMs: 50,
      batchSize: 10,
      maxScriptMs: 2,
      maxEntriesPerGroup: 40,
      consumerName: "stream-janitor",
    },
  });
  const file = await writeConfigFile(config);
  cleanups.push(file.remove);
  const daemon = await DaemonProcess.start(file.path);
  cleanups.push(() => daemon.kill());
  return daemon;
}

/** Stuck entries that every replica has (WAIT): a failover cannot take them away. */
async function stuckOnEveryReplica(primary: Redis, stream: string): Promise<string[]> {
  const ids = await addStuckEntries(primary, stream, "workers", numberedBodies(STUCK));
  expect(await primary.call("WAIT", 1, 10_000)).toBe(1);
  return ids;
}

async function pendingCount(redis: Redis, stream: string): Promise<number> {
  return (await redis.xpending(stream, "workers"))[0] as number;
}

/** Samples a gauge of the daemon until stopped: for values too brief to wait for. */
function sampleMetric(daemon: DaemonProcess, name: string): { values: number[]; stop(): void } {
  const values: number[] = [];
  let running = true;
  void (async () => {
    while (running) {
      const value = await daemon.metric(name).catch(() => undefined);
      if (value !== undefined) values.push(value);
    }
  })();
  return {
    values,
    stop: () => {
      running = false;
    },
  };
}

interface FailoverFigures {
  promotionToFirstSweepMs: number;
  /** Lease steps on the new primary from the promotion to its first sweep script. */
  promotionToFirstSweepSteps: number;
  resweptEntries: number;
  outcome: Awaited<ReturnType<typeof expectExactlyOnce>>;
}

/**
 * The scenario of both failover tests: a daemon draining stuck entries, `trigger` in the middle,
 * then every entry must end requeued exactly once on the new primary.
 */
async function failoverMidSweep(
  name: string,
  trigger: (primaryPort: number) => Promise<void>,
): Promise<FailoverFigures & { daemon: DaemonProcess; redisUp: number[] }> {
  await set.waitUntilHealthy();
  const prefix = uniquePrefix(name);
  const stream = `${prefix}:stream`;
  const oldPort = await set.primaryPort();
  const oldPrimary = set.node(oldPort);
  const ids = await stuckOnEveryReplica(oldPrimary, stream);
  const daemon = await sentinelDaemon(prefix);
  await waitFor(async () => (await pendingCount(oldPrimary, stream)) <= STUCK * 0.8, {
    what: "the daemon to be in the middle of the stuck entries",
  });
  const redisUp = sampleMetric(daemon, "stream_janitor_redis_up");
  const { switched } = await set.watchSwitch();
  await trigger(oldPort);
  const { port: newPort, at: promotedAt } = await switched;
  // What the new primary runs, to count the daemon's lease steps there. Opened now: the promotion
  // kills every normal client of both servers (Sentinel's CLIENT KILL), a MONITOR included, and
  // the daemon's connections with them, so it reconnects after this (a step it sent before
  // would only lower the count).
  const feed = await monitorCommands(newPort);
  cleanups.push(() => Promise.resolve(feed.stop()));
  expect(newPort).not.toBe(oldPort);
  const newPrimary = set.node(newPort);
  const pendingAtPromotion = await pendingCount(newPrimary, stream);
  expect(pendingAtPromotion).toBeGreaterThan(0);
  // Only a sweep on the new primary can shrink the new primary's PEL.
  await waitFor(async () => (await pendingCount(newPrimary, stream)) < pendingAtPromotion, {
    timeoutMs: 15_000,
    intervalMs: 5,
    what: "the first sweep on the new primary",
  }).catch((error: unknown) => {
    throw new Error(
      `${String(error)}; pending at promotion ${pendingAtPromotion}; daemon logs: ${JSON.stringify(daemon.logs.slice(-40))}`,
    );
  });
  const promotionToFirstSweepMs = performance.now() - promotedAt;
  const lease = `${prefix}:lease`;
  // The MONITOR line of that sweep comes on its own connection, and may land after the PEL read
  // above has seen the sweep's effect (a fresh clone's run read the feed before it had).
  const firstSweep = await waitFor(
    () => {
      const index = feed.calls.findIndex((call) => isScriptOn(call, stream));
      return index >= 0 ? index : undefined;
    },
    { what: "the first sweep script in the new primary's MONITOR feed" },
  );
  expect(firstSweep).toBeGreaterThanOrEqual(0);
  const promotionToFirstSweepSteps = feed.calls
    .slice(0, firstSweep)
    .filter((call) => isLeaseStep(call, lease)).length;
  await waitFor(async () => (await pendingCount(newPrimary, stream)) === 0, {
    timeoutMs: 30_000,
    what: "every stuck entry to be requeued on the new primary",
  });
  redisUp.stop();

  const outcome = await expectExactlyOnce(newPrimary, {
    stream,
    group: "workers",
    deadLetterStream: defaultDeadLetterStream(stream),
    originalIds: ids,
  });
  // Pages written to the old primary after the last replication are lost with it: their entries
  // are pending again on the new primary and swept a second time (claimed twice, copied once).
  const claimed = await waitFor(() => daemon.metric("stream_janitor_claimed_entries_total"));
  const figures = {
    promotionToFirstSweepMs,
    promotionToFirstSweepSteps,
    resweptEntries: claimed - STUCK,
    outcome,
  };
  console.log(
    `${name}: ${JSON.stringify(figures)} (bound ${RESUME_STEPS} steps, ${RESUME_BOUND_MS} ms)`,
  );

  // The same process, following the new primary: ready, leader, gauges read from it.
  expect(await daemon.metric("stream_janitor_redis_up")).toBe(1);
  expect((await fetch(`${daemon.httpUrl}/readyz`)).status).toBe(200);
  await waitFor(() => daemon.isLeader(), { what: "leadership on the new primary" });
  const pendingGauge = await (await fetch(`${daemon.httpUrl}/metrics`)).text();
  expect(pendingGauge).toContain(
    `stream_janitor_pending_entries{stream="${stream}",group="workers"} 0`,
  );
  daemon.signal("SIGTERM");
  expect((await daemon.exited).code).toBe(0);
  expect(await newPrimary.exists(`${prefix}:lease`)).toBe(0);
  return { ...figures, daemon, redisUp: redisUp.values };
}

describe("Sentinel: one primary, one replica, three Sentinels", () => {
  it("replicates a page's copies and acknowledgements together, in one MULTI/EXEC", async () => {
    const primary = await set.primary();
    const replicaPort = set.nodes.map((n) => n.port).find((p) => p !== primary.options.port);
    const stream = `${uniquePrefix("multi")}:stream`;
    await addStuckEntries(primary, stream, "workers", numberedBodies(3));
    await primary.call("WAIT", 1, 5000);
    const feed = await monitorCommands(replicaPort ?? 0);
    const seen = feed.commands;
    const scripted = registerScripts(primary);
    await runSweepPage(scripted, {
      group: groupConfig(stream, { minIdleMs: 1 }),
      janitorConsumer: "janitor",
      cursor: "0-0",
      maxClaimed: 10,
      maxExamined: 10,
      firstWindow: 10,
      budgetMs: 1000,
      rotation: 0,
      fence: undefined,
    });
    await waitFor(() => seen.includes("EXEC"), { what: "the page to reach the replica" });
    feed.stop();
    const page = seen.slice(seen.indexOf("MULTI"), seen.indexOf("EXEC") + 1);
    expect(page.filter((c) => c === "XADD")).toHaveLength(3);
    expect(page.filter((c) => c === "XACK").length).toBeGreaterThan(0);
    expect(
      seen.slice(0, seen.indexOf("MULTI")).filter((c) => c === "XADD" || c === "XACK"),
    ).toEqual([]);
  });

  it("WAITs for replicas after acquiring when lease.waitReplicas is set", async () => {
    const primary = await set.primary();
    const logger = pino({ level: "silent" });
    const prefix = uniquePrefix("wait");
    const one = new Lease({
      redis: primary,
      key: `${prefix}:one`,
      ...LEASE,
      logger,
      waitReplicas: 1,
      waitTimeoutMs: 150,
    });
    expect(await one.tryAcquireOnce()).toBeDefined();
    await one.stop();
    // Only one replica exists: a lease that must reach two is never acted on, and is released.
    const two = new Lease({
      redis: primary,
      key: `${prefix}:two`,
      ...LEASE,
      logger,
      waitReplicas: 2,
      waitTimeoutMs: 150,
    });
    expect(await two.tryAcquireOnce()).toBeUndefined();
    await two.stop();
    expect(await primary.exists(`${prefix}:two`)).toBe(0);
  });

  it("follows SENTINEL FAILOVER in the middle of the stuck entries: nothing lost, nothing duplicated", async () => {
    const figures = await failoverMidSweep("sentinel-failover", async () => {
      const sentinel = set.sentinel();
      await sentinel.call("SENTINEL", "FAILOVER", MASTER_NAME);
      sentinel.disconnect();
    });
    expect(figures.outcome).toEqual({ stillPending: 0, requeued: STUCK, deadLettered: 0 });
    expect(figures.promotionToFirstSweepSteps).toBeLessThanOrEqual(RESUME_STEPS);
  });

  it("follows the promotion after SIGKILL of the primary; redis_up drops and comes back", async () => {
    const figures = await failoverMidSweep("sentinel-sigkill", (port) => set.kill(port));
    expect(figures.outcome).toEqual({ stillPending: 0, requeued: STUCK, deadLettered: 0 });
    expect(figures.promotionToFirstSweepSteps).toBeLessThanOrEqual(RESUME_STEPS);
    const firstDown = figures.redisUp.indexOf(0);
    expect(firstDown).toBeGreaterThanOrEqual(0);
    expect(figures.redisUp.slice(firstDown)).toContain(1);
  });
});
