import type { Redis } from "ioredis";
import { keySlot } from "../../src/core/keySlot.js";
import { failover, killMaster, migrateSlot } from "./clusterFaults.js";
import { ChaosCluster } from "./clusterNodes.js";
import { ClusterWatch } from "./clusterWatch.js";
import { ChaosLink, type ChaosProxy } from "./proxy.js";
import { LEASE_KEY } from "./servers.js";
import { proxyTo, type JanitorLink, type Topology } from "./topology.js";

/**
 * A proxy to each Cluster node: the janitor learns the nodes' addresses from the slot map (and
 * follows MOVED and ASK to them), and the port map (portMap.ts) sends each connection to a node's
 * port through the janitor's own proxy of it, so a fault on its link reaches every node.
 */
async function clusterLink(ports: readonly number[], redis: Record<string, unknown>) {
  const proxies: ChaosProxy[] = [];
  const portMap: Record<number, number> = {};
  for (const port of ports) {
    const [proxy, proxyPort] = await proxyTo(port);
    proxies.push(proxy);
    portMap[port] = proxyPort;
  }
  return { link: new ChaosLink(proxies), redis, portMap } satisfies JanitorLink;
}

/**
 * Three masters with a replica each (clusterNodes.ts). The janitors and the operator are
 * configured as in the README's Redis Cluster section: one seed url and the other nodes. The
 * consumers run the README's loops with their client's Cluster class, and the harness uses
 * ioredis's Cluster for the data and a plain client of each node for per-node commands.
 */
export async function cluster(): Promise<Topology> {
  const nodes = await ChaosCluster.start();
  // The Cluster's own failovers too (a master stalled past cluster-node-timeout), and when the
  // lease's master refused commands: clusterWatch.ts.
  const leaseSlot = keySlot(LEASE_KEY);
  const watch = await ClusterWatch.start(nodes.ports, { leaseSlot }).catch(
    async (error: unknown) => {
      await nodes.stop();
      throw error;
    },
  );
  const [first, ...rest] = nodes.ports;
  const url = `redis://127.0.0.1:${first ?? 0}`;
  const clusterRedis = { mode: "cluster", url, nodes: rest.map((port) => `127.0.0.1:${port}`) };
  return {
    name: "cluster",
    url,
    // ioredis's Cluster answers the key commands the harness sends as Redis does (each routed to
    // its slot's master); the commands meant for every server go through nodes().
    connect: () => nodes.connect() as unknown as Redis,
    consumerEnv: { REDIS_URL: url, CHAOS_CLUSTER_NODES: JSON.stringify(nodes.seeds) },
    nodes: () => nodes.clients(),
    linkJanitor: () => clusterLink(nodes.ports, clusterRedis),
    operatorRedis: clusterRedis,
    restart: (_downMs, pick) => watch.requested(() => killMaster(nodes, pick)),
    failover: (pick) => watch.requested(() => failover(nodes, pick)),
    migrate: (pick) => migrateSlot(nodes, pick),
    clusterFailovers: watch.failovers,
    onRedisDown: (listener) => watch.onDown(listener),
    clusterDown: watch.down.spans,
    stop: async () => {
      await watch.stop();
      await nodes.stop();
    },
  };
}
