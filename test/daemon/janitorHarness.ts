import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach } from "vitest";
import { createJanitor, namedConnections } from "../../src/daemon/createJanitor.js";
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
