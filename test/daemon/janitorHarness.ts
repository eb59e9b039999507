import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach } from "vitest";
import type { JanitorConfig } from "../../src/core/configTypes.js";
import { createJanitor, namedConnections, type Janitor } from "../../src/daemon/createJanitor.js";
import type { RedisClient } from "../../src/redis/RedisClient.js";
import type { RedisFixture } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";

/**
 * The runtime's parts (createJanitor) on the fixture's server, as `run` builds them, for tests
 * that drive its sweeps and read what it writes. Connections close and the lease stops after
 * each test.
 */
export function useJanitorFactory(fixture: RedisFixture) {
  const silent = pino({ level: "silent" });
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });
  return (prefix: string, overrides: Parameters<typeof testConfig>[3] = {}) => {
    const config = testConfig(fixture.server.url, prefix, [], overrides);
    const open = namedConnections(config, silent);
    const clients: RedisClient[] = [];
    cleanup.push(() => {
      for (const client of clients) client.disconnect();
    });
    const registry = new Registry();
    const janitor = createJanitor(config, {
      logger: silent,
      registry,
      version: "test",
      connect: (name, commandTimeoutMs, failFast = false) => {
        const client = open(name, commandTimeoutMs, failFast);
        clients.push(client);
        return client;
      },
    });
    cleanup.push(() => janitor.lease.stop());
    return { config, janitor, registry };
  };
}

/**
 * The leader's sweep work (createJanitor's createSweepWork, as `run` builds it: outcomes counted
 * in the janitor's metrics, events written, `refresher` told of changed groups), for tests that
 * drive passes by hand: the interval is a minute unless `sweep` says otherwise. The supervisor
 * acts under the janitor's lease (acquire it, or hand supervise() a term).
 */
export function useSweepWork(fixture: RedisFixture) {
  const janitorFor = useJanitorFactory(fixture);
  const stops: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });
  return (
    prefix: string,
    groups: Parameters<Janitor["createSweepWork"]>[1],
    options: {
      sweep?: Partial<JanitorConfig["sweep"]>;
      refresher?: Parameters<Janitor["createSweepWork"]>[2];
    } = {},
  ) => {
    const base = testConfig(fixture.server.url, prefix);
    const sweep = { ...base.sweep, intervalMs: 60_000, ...options.sweep };
    const { config, janitor, registry } = janitorFor(prefix, { sweep });
    const work = janitor.createSweepWork(config, groups, options.refresher);
    stops.push(() => work.supervisor.stop());
    return { ...work, janitor, registry, metrics: janitor.metrics, config };
  };
}
