import { once } from "node:events";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { Lease } from "../../src/lease/Lease.js";
import { createClusterClient } from "../../src/redis/createClusterClient.js";
import { HANG_DEADLINE_MS } from "../support/deadlines.js";
import { redirectPorts } from "../support/redirectPorts.js";
import { useRedisCluster } from "../support/redisCluster.js";
import { uniquePrefix } from "../support/redisServer.js";
import { startSlowSetupProxy } from "../support/slowSetupProxy.js";

const silent = pino({ level: "silent" });

/** The chaos runs' lease (README "Chaos test"): its connection's command timeout is 200 ms. */
const LEASE = { ttlMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 };
/** createJanitor's bound on one lease command: max(lease.retryPeriodMs, 50). */
const LEASE_COMMAND_TIMEOUT_MS = LEASE.retryPeriodMs;
/**
 * A new connection answers its first command this late: past the lease's command timeout, well
 * within the cluster client's bound on a slot map refresh and on a connection (1 s).
 */
const SETUP_MS = 350;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("the lease's cluster connection when every new connection is slow to set up", () => {
  const fixture = useRedisCluster();

  /** The lease's connection (as createJanitor opens it), every new connection taking `setupMs`. */
  async function leaseClient(setupMs: number) {
    const { cluster } = fixture;
    const proxies = await Promise.all(
      cluster.nodes.map((node) => startSlowSetupProxy(node.port, setupMs)),
    );
    cleanups.push(async () => {
      await Promise.all(proxies.map((proxy) => proxy.close()));
    });
    // Every connection of the client, to a seed or to a node the slot map names, goes through
    // its node's proxy.
    const map = new Map(cluster.nodes.map((node, i) => [node.port, proxies[i]?.port ?? 0]));
    cleanups.push(redirectPorts(map));
    const errors: string[] = [];
    const client = createClusterClient({
      url: cluster.seedUrl,
      nodes: cluster.seedNodes,
      password: "",
      connectionName: "stream-janitor:lease",
      commandTimeoutMs: LEASE_COMMAND_TIMEOUT_MS,
      logger: silent,
      failFast: true,
    });
    client.on("error", (error: Error) => errors.push(error.message));
    cleanups.push(() => client.disconnect());
    return { client, errors };
  }

  it("refreshes its slot map within slotsRefreshTimeout, not its 200 ms command timeout, and the lease is won", async () => {
    const { client, errors } = await leaseClient(SETUP_MS);
    const lease = new Lease({
      redis: client,
      key: `${uniquePrefix("slow-setup")}:lease`,
      ...LEASE,
      logger: silent,
      fencePerSlot: true,
    });
    cleanups.push(() => lease.stop());
    // The event, or a hang deadline (deadlines.ts) that only fails the test.
    const acquired = once(lease, "acquired", { signal: AbortSignal.timeout(HANG_DEADLINE_MS) });
    lease.start();
    // Before the fix every refresh failed ("Failed to refresh slots cache.") and the client
    // reconnected for ever: the lease was never won.
    await acquired.catch((error: unknown) => {
      const seen = [...new Set(errors)].join("; ");
      throw new Error(`${String(error)}; the client's errors: ${seen}`);
    });
    expect(lease.isLeader).toBe(true);
    expect(client.status).toBe("ready");
  });

  it("bounds a command by its timeout while no slot map can be fetched (the lease's stop does not hang)", async () => {
    // No new connection answers within the test: the client waits for a slot map, the command
    // in its offline queue.
    const { client } = await leaseClient(HANG_DEADLINE_MS * 4);
    const key = `${uniquePrefix("no-map")}:lease`;
    const outcome = client.set(key, "x", "PX", 1000, "NX").then(
      () => "answered",
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    // Before the fix the command waited there without a timer, for ever (the test's own
    // timeout ended it).
    expect(await outcome).toBe("Command timed out");
  });
});
