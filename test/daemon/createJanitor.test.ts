import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { createJanitor, namedConnections } from "../../src/daemon/createJanitor.js";
import type { RedisClient } from "../../src/redis/RedisClient.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { testConfig } from "../support/testConfig.js";

const fixture = useRedisServer();
const silent = pino({ level: "silent" });
const cleanup: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** The janitor of `run` and `sweep`, with the connections it asked for recorded. */
function janitorFor(prefix: string, lease?: { ttlMs: number; renewDeadlineMs: number }) {
  const base = testConfig(fixture.server.url, prefix);
  const config = { ...base, lease: { ...base.lease, ...lease } };
  const opened: { name: string; commandTimeoutMs: number; failFast: boolean }[] = [];
  const clients: RedisClient[] = [];
  const open = namedConnections(config, silent);
  cleanup.push(() => {
    for (const client of clients) client.disconnect();
  });
  const janitor = createJanitor(config, {
    logger: silent,
    registry: new Registry(),
    version: "test",
    connect: (name, commandTimeoutMs, failFast = false) => {
      opened.push({ name, commandTimeoutMs, failFast });
      const client = open(name, commandTimeoutMs, failFast);
      clients.push(client);
      return client;
    },
  });
  cleanup.push(() => janitor.lease.stop());
  return { config, janitor, opened };
}

describe("createJanitor", () => {
  it("opens the sweep and lease connections the way run and sweep both need them", () => {
    const { opened } = janitorFor(uniquePrefix("connections"));
    expect(opened).toEqual([
      { name: "sweep", commandTimeoutMs: 10_000, failFast: false },
      // Renewals fail fast: one retry period (200 ms in the test configuration).
      { name: "lease", commandTimeoutMs: 200, failFast: true },
    ]);
  });

  it("builds a lease that refuses timings breaking its rule", () => {
    expect(() =>
      janitorFor(uniquePrefix("timings"), { ttlMs: 1000, renewDeadlineMs: 1000 }),
    ).toThrow(/ttlMs \(1000\) must be more than renewDeadlineMs/);
  });

  it("sweeps under the lease's term and records outcomes and the lease's gauges", async () => {
    const prefix = uniquePrefix("work");
    const stream = `${prefix}:stream`;
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3));
    const { config, janitor } = janitorFor(prefix);
    const { supervisor, maintenance } = janitor.createSweepWork(config, [groupConfig(stream)]);
    expect(maintenance).toBeDefined();
    // No term yet: a standby sweeps nothing.
    expect(await supervisor.supervise()).toBeUndefined();
    const term = await janitor.lease.tryAcquireOnce();
    expect(term?.fencingToken).toBe(1);
    const [result] = (await supervisor.supervise()) ?? [];
    expect(result).toMatchObject({ claimed: 3, requeued: 3 });
    const value = async (metric: { get(): Promise<{ values: { value: number }[] }> }) =>
      (await metric.get()).values[0]?.value;
    expect(await value(janitor.metrics.claimedEntries)).toBe(3);
    expect(await value(janitor.metrics.leader)).toBe(1);
    expect(await value(janitor.metrics.fencingToken)).toBe(1);
    await supervisor.stop();
  });

  it("tells the scrape refresher which groups a sweep changed, as run wires it", async () => {
    const prefix = uniquePrefix("changed");
    const stream = `${prefix}:stream`;
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2));
    await addStuckEntries(fixture.redis, `${prefix}:quiet`, "workers", numberedBodies(1), {
      idleMs: 0,
    });
    const { config, janitor } = janitorFor(prefix);
    const changed: string[] = [];
    const refresher = { markChanged: (groupId: string) => changed.push(groupId) };
    const groups = [groupConfig(stream), groupConfig(`${prefix}:quiet`)];
    const { supervisor } = janitor.createSweepWork(config, groups, refresher);
    await janitor.lease.tryAcquireOnce();
    const results = (await supervisor.supervise()) ?? [];
    expect(results.map((result) => result.claimed)).toEqual([2, 0]);
    // Only the group whose PEL the sweep changed: its gauges are stale.
    expect(changed).toEqual([`${stream}/workers`]);
    await supervisor.stop();
  });
});
