import { freePort } from "../../src/demo/spawnRedisServer.js";
import { MASTER_NAME, SentinelSet } from "../support/sentinelSet.js";
import { ChaosProxy } from "./proxy.js";
import { ChaosRedis } from "./servers.js";

export type TopologyName = "standalone" | "sentinel";

/** The Redis servers of a run, and how each party reaches the primary. */
export interface Topology {
  name: TopologyName;
  /** Where the harness, the producers, the consumers and the stale-leader probe reach it. */
  url: string;
  /** The janitors reach Redis through a proxy each (latency and partition faults). */
  linked: boolean;
  primaryPort(): number;
  /** A janitor's `redis` configuration; `linkPort`: its own proxy, when linked. */
  janitorRedis(linkPort: number): Record<string, unknown>;
  /** SIGKILL of the primary and a restart from its AOF (standalone). */
  restart?: (downMs: number) => Promise<void>;
  /** SENTINEL FAILOVER, resolved once the new primary is announced (sentinel). */
  failover?: () => Promise<string>;
  stop(): Promise<void>;
}

/** One redis-server from PATH, appendonly with every write fsynced. */
export async function standalone(dataDir: string): Promise<Topology> {
  const redis = new ChaosRedis(await freePort(), dataDir);
  await redis.start();
  return {
    name: "standalone",
    url: redis.url,
    linked: true,
    primaryPort: () => redis.port,
    janitorRedis: (linkPort) => ({ url: `redis://127.0.0.1:${linkPort}` }),
    restart: async (downMs) => {
      await redis.kill();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await redis.start();
    },
    stop: () => redis.kill(),
  };
}

/**
 * 1 primary, 1 replica, 3 Sentinels (test/support's SentinelSet; data nodes without AOF). The
 * janitors use Sentinel as configured in the README; the producers, the README's consumer loops
 * (which take one URL) and the harness reach the primary through a proxy that follows the
 * failover, as a service address in front of the primary would.
 */
export async function sentinel(): Promise<Topology> {
  const set = await SentinelSet.start();
  let primary = await set.primaryPort();
  const front = new ChaosProxy(() => primary);
  const url = `redis://127.0.0.1:${await front.start()}`;
  // Every switch, ours or the Sentinels' own (a loaded host can look down for a second): the
  // front proxy follows it, and drops what went to the old primary.
  const watcher = set.sentinel(1);
  await watcher.subscribe("+switch-master");
  watcher.on("message", (_channel: string, message: string) => {
    // "<name> <old-ip> <old-port> <new-ip> <new-port>"
    const parts = message.split(" ");
    if (parts[0] !== MASTER_NAME || Number(parts[4]) === primary) return;
    primary = Number(parts[4]);
    front.dropConnections();
  });
  return {
    name: "sentinel",
    url,
    linked: false,
    primaryPort: () => primary,
    janitorRedis: () => ({
      mode: "sentinel",
      url: `redis://${MASTER_NAME}`,
      nodes: set.sentinelNodes,
      masterName: MASTER_NAME,
    }),
    failover: async () => {
      const old = primary;
      const client = set.sentinel(0);
      try {
        await client.call("SENTINEL", "FAILOVER", MASTER_NAME);
      } finally {
        client.disconnect();
      }
      const until = Date.now() + 20_000;
      while (primary === old && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return primary === old ? "no +switch-master within 20 s" : `primary ${old} -> ${primary}`;
    },
    stop: async () => {
      watcher.disconnect();
      await front.close();
      await set.stop();
    },
  };
}
