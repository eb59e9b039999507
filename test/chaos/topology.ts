import { Redis } from "ioredis";
import { freePort } from "../../src/demo/spawnRedisServer.js";
import { MASTER_NAME, SentinelSet } from "../support/sentinelSet.js";
import type { ClusterFailover } from "./clusterWatch.js";
import { ChaosLink, ChaosProxy } from "./proxy.js";
import type { DownSpan } from "./downSpans.js";
import { ChaosRedis } from "./servers.js";

export type TopologyName = "standalone" | "sentinel" | "cluster";

/** A janitor's own way to Redis: its proxies, its `redis` configuration through them. */
export interface JanitorLink {
  link: ChaosLink;
  redis: Record<string, unknown>;
  /** Server port -> its proxy's port, for addresses the janitor learns (portMap.ts). */
  portMap: Record<number, number>;
}

export async function proxyTo(port: number): Promise<[ChaosProxy, number]> {
  const proxy = new ChaosProxy(() => port);
  return [proxy, await proxy.start()];
}

/** What a fault on the servers did: its note, and on Cluster more (nemesis.ts's AppliedFault). */
export interface FaultOutcome {
  note: string;
  slots?: readonly (readonly [number, number])[];
  happened?: boolean;
  /** When the fault struck (host ms), if later than when it was applied (a kill that waited). */
  at?: number;
}

/** The Redis servers of a run, and how each party reaches the primary. */
export interface Topology {
  name: TopologyName;
  /** Where the harness, the producers, the consumers and the stale-leader probe reach it. */
  url: string;
  /** A new client of the data (on Cluster, ioredis's Cluster: it routes each key to its slot). */
  connect(): Redis;
  /** The consumers' environment: REDIS_URL, and on Cluster CHAOS_CLUSTER_NODES (jsPrelude.ts). */
  consumerEnv: Record<string, string>;
  /**
   * Plain clients of each running data node, for the commands that go to every server (CLIENT
   * KILL, SCRIPT FLUSH, SLOWLOG, INFO, CLIENT UNBLOCK); one on standalone and Sentinel.
   */
  nodes(): Redis[];
  /** Each janitor reaches Redis through its own link (latency and partition faults). */
  linkJanitor(): Promise<JanitorLink>;
  /** The operator's `redis` configuration: straight to the servers. */
  operatorRedis: Record<string, unknown>;
  /**
   * SIGKILL of the primary and a restart from its AOF (standalone); on Cluster of the master of a
   * stream drawn by `pick`, restarted as a replica once its replica took over. Says how it went.
   */
  restart?: (downMs: number, pick: number) => Promise<string | FaultOutcome>;
  /** SENTINEL FAILOVER, or CLUSTER FAILOVER on a drawn master's replica, once it took over. */
  failover?: (pick: number) => Promise<string | FaultOutcome>;
  /** Cluster: a slot migration (MIGRATE) of a drawn stream's slot to another master. */
  migrate?: (pick: number) => Promise<FaultOutcome>;
  /** Sentinel: when each `+switch-master` was seen, ours or the Sentinels' own (host ms). */
  switches?: number[];
  /** Cluster: every failover seen (clusterWatch.ts), tagged with whether the nemesis caused it. */
  clusterFailovers?: readonly ClusterFailover[];
  /**
   * Cluster: when the master of the lease's slot refused every command (CLUSTERDOWN, or killed),
   * told to `listener` as it happens: no janitor could lead meanwhile (clusterDown.ts).
   */
  onRedisDown?: (listener: (down: boolean, at: number) => void) => void;
  clusterDown?: readonly DownSpan[];
  stop(): Promise<void>;
}

/** A plain client of the data; Redis is killed on purpose: reconnection errors are no news. */
function plainClient(url: string): Redis {
  const client = new Redis(url, { protocol: 2, maxRetriesPerRequest: 3 });
  client.on("error", () => undefined);
  return client;
}

/** One redis-server from PATH, appendonly with every write fsynced. */
export async function standalone(dataDir: string): Promise<Topology> {
  const redis = new ChaosRedis(await freePort(), dataDir);
  await redis.start();
  const node = plainClient(redis.url);
  return {
    name: "standalone",
    url: redis.url,
    connect: () => plainClient(redis.url),
    consumerEnv: { REDIS_URL: redis.url },
    nodes: () => [node],
    // A restart keeps the server's port: the proxy goes on pointing at it.
    linkJanitor: async () => {
      const [proxy, port] = await proxyTo(redis.port);
      return {
        link: new ChaosLink([proxy]),
        redis: { url: `redis://127.0.0.1:${port}` },
        portMap: {},
      };
    },
    operatorRedis: { url: redis.url },
    restart: async (downMs) => {
      await redis.kill();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      return redis.start();
    },
    stop: async () => {
      node.disconnect();
      await redis.kill();
    },
  };
}

/**
 * A proxy to each Sentinel and to each data node. The janitor connects to the primary the
 * Sentinels name, and to the Sentinels they list, through the port map (portMap.ts).
 */
async function sentinelLink(
  set: SentinelSet,
  sentinelRedis: Record<string, unknown>,
): Promise<JanitorLink> {
  const proxies: ChaosProxy[] = [];
  const portMap: Record<number, number> = {};
  for (const server of [...set.sentinels, ...set.nodes]) {
    const [proxy, port] = await proxyTo(server.port);
    proxies.push(proxy);
    portMap[server.port] = port;
  }
  const nodes = set.sentinels.map((s) => `127.0.0.1:${portMap[s.port] ?? s.port}`);
  return { link: new ChaosLink(proxies), redis: { ...sentinelRedis, nodes }, portMap };
}

/**
 * How long a failover's fault waits for `+switch-master` before the schedule goes on (a later
 * one is found in `switches`; nemesis.ts settles which failovers happened).
 */
const FAILOVER_WAIT_MS = 5000;
export const NOT_ANNOUNCED = "no +switch-master yet";

/**
 * 1 primary, 1 replica, 3 Sentinels (test/support's SentinelSet; data nodes without AOF). The
 * janitors use Sentinel as configured in the README, each through its own link (sentinelLink);
 * the producers, the README's consumer loops (which take one URL) and the harness reach the
 * primary through a proxy that follows the failover, as a service address in front of the
 * primary would.
 */
export async function sentinel(): Promise<Topology> {
  const set = await SentinelSet.start();
  const sentinelRedis = {
    mode: "sentinel",
    url: `redis://${MASTER_NAME}`,
    nodes: set.sentinelNodes,
    masterName: MASTER_NAME,
  };
  let primary = await set.primaryPort();
  const front = new ChaosProxy(() => primary);
  const url = `redis://127.0.0.1:${await front.start()}`;
  const node = plainClient(url);
  // Every switch, ours or the Sentinels' own (a loaded host can look down for a second): the
  // front proxy follows it, and drops what went to the old primary.
  const switches: number[] = [];
  const watcher = set.sentinel(1);
  await watcher.subscribe("+switch-master");
  watcher.on("message", (_channel: string, message: string) => {
    // "<name> <old-ip> <old-port> <new-ip> <new-port>"
    const parts = message.split(" ");
    if (parts[0] !== MASTER_NAME || Number(parts[4]) === primary) return;
    primary = Number(parts[4]);
    switches.push(Date.now());
    front.dropConnections();
  });
  return {
    name: "sentinel",
    url,
    connect: () => plainClient(url),
    consumerEnv: { REDIS_URL: url },
    nodes: () => [node],
    linkJanitor: () => sentinelLink(set, sentinelRedis),
    operatorRedis: sentinelRedis,
    failover: async () => {
      const old = primary;
      const client = set.sentinel(0);
      try {
        await client.call("SENTINEL", "FAILOVER", MASTER_NAME);
      } finally {
        client.disconnect();
      }
      const until = Date.now() + FAILOVER_WAIT_MS;
      while (primary === old && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return primary === old ? NOT_ANNOUNCED : `primary ${old} -> ${primary}`;
    },
    switches,
    stop: async () => {
      node.disconnect();
      watcher.disconnect();
      await front.close();
      await set.stop();
    },
  };
}
