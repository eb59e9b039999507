import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cluster, Redis } from "ioredis";
import { clusterInfo, MASTERS, slotOwners, slotRange } from "../support/clusterSlots.js";
import { startOnFreePort } from "../support/spawnOnFreePort.js";
import { pollUntil } from "./quiescence.js";
import { ChaosRedis } from "./servers.js";

/**
 * Cluster nodes without persistence, as test/support's cluster but for a loaded host: a node is
 * failed after 3 s of silence (not 0.5 s, so a starved host does not fail nodes over by itself),
 * and a replica is promoted however long its link was down (validity factor 0), so a killed
 * master's slots always come back. A killed master restarts empty and rejoins as a replica.
 */
const NODE_ARGS = [
  "--appendonly",
  "no",
  "--cluster-enabled",
  "yes",
  "--cluster-config-file",
  "nodes.conf",
  "--cluster-node-timeout",
  "3000",
  "--cluster-require-full-coverage",
  "no",
  "--cluster-replica-validity-factor",
  "0",
  "--repl-diskless-sync-delay",
  "0",
];
/** How long a promotion, a rejoin or a full sync of a long run's streams may take. */
export const SETTLE_MS = 120_000;

interface Node {
  server: ChaosRedis;
  /** A plain client of this node alone (per-node commands). */
  client: Redis;
  id: string;
}

function plainClient(port: number): Redis {
  const client = new Redis({ port, host: "127.0.0.1", protocol: 2, maxRetriesPerRequest: 1 });
  client.on("error", () => undefined); // nodes are killed on purpose
  return client;
}

const running = (node: Node): boolean => {
  const child = node.server.process;
  return child !== undefined && child.exitCode === null && child.signalCode === null;
};

/** "id host:port@bus flags master ..." of CLUSTER NODES, for the nodes not marked failed. */
interface Seen {
  id: string;
  port: number;
  master: boolean;
  masterId: string;
}

/** Three masters with a replica each, on loopback (clusterFaults.ts: the nemesis's faults). */
export class ChaosCluster {
  private constructor(
    private readonly root: string,
    private readonly nodes: readonly Node[],
  ) {}

  /** Six nodes, each on a port free when it binds (startOnFreePort), joined into a Cluster. */
  static async start(): Promise<ChaosCluster> {
    const root = await mkdtemp(join(tmpdir(), "sj-chaos-cluster-"));
    const startNode = async (port: number, dir: string) => {
      const server = new ChaosRedis(port, dir, NODE_ARGS);
      await server.start();
      return server;
    };
    const started = await Promise.allSettled(
      Array.from({ length: MASTERS * 2 }, () =>
        startOnFreePort(startNode, { root, clusterBus: true }),
      ),
    );
    const servers = started.flatMap((s) => (s.status === "fulfilled" ? [s.value.server] : []));
    const nodes: Node[] = servers.map((server) => ({
      server,
      client: plainClient(server.port),
      id: "",
    }));
    const cluster = new ChaosCluster(root, nodes);
    const failed = started.find((s) => s.status === "rejected");
    try {
      if (failed !== undefined) throw failed.reason;
      for (const node of nodes) node.id = String(await node.client.call("CLUSTER", "MYID"));
      await cluster.join();
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  /** What `redis-cli --cluster create` does, without its fixed waits (test/support's way). */
  private async join(): Promise<void> {
    const [first] = this.nodes;
    if (first === undefined) throw new Error("no cluster node");
    for (let i = 0; i < MASTERS; i += 1) {
      const [start, end] = slotRange(i, MASTERS);
      const admin = this.nodes[i]?.client;
      await admin?.call("CLUSTER", "SET-CONFIG-EPOCH", i + 1);
      await admin?.call("CLUSTER", "ADDSLOTSRANGE", start, end);
    }
    for (const node of this.nodes.slice(1)) {
      await first.client.call("CLUSTER", "MEET", "127.0.0.1", node.server.port);
    }
    const known = async () =>
      (await Promise.all(this.nodes.map((n) => clusterInfo(n.client)))).every(
        (info) => info.get("cluster_known_nodes") === String(this.nodes.length),
      );
    if (!(await pollUntil(known, SETTLE_MS))) throw new Error("cluster nodes did not meet");
    for (let i = MASTERS; i < this.nodes.length; i += 1) {
      const master = this.nodes[i - MASTERS];
      await this.nodes[i]?.client.call("CLUSTER", "REPLICATE", master?.id ?? "");
    }
    const settled = async () => (await this.stable()) && (await this.replicasInSync());
    if (!(await pollUntil(settled, SETTLE_MS))) throw new Error("cluster did not settle");
  }

  /** Every node as a seed of a cluster client. */
  get seeds(): { host: string; port: number }[] {
    return this.nodes.map((node) => ({ host: "127.0.0.1", port: node.server.port }));
  }

  get ports(): number[] {
    return this.nodes.map((node) => node.server.port);
  }

  /** A cluster client for the data: it follows MOVED, ASK, TRYAGAIN and failovers itself. */
  connect(): Cluster {
    const client = new Cluster(this.seeds, {
      redisOptions: { protocol: 2 },
      retryDelayOnTryAgain: 50,
      retryDelayOnFailover: 200,
      retryDelayOnClusterDown: 300,
    });
    client.on("error", () => undefined);
    return client;
  }

  /** Plain clients of every running node (masters and replicas). */
  clients(): Redis[] {
    return this.nodes.filter(running).map((node) => node.client);
  }

  /** CLUSTER NODES as one running node sees it, failed nodes left out. */
  async seen(): Promise<Seen[]> {
    for (const node of this.nodes.filter(running)) {
      const text = (await node.client.call("CLUSTER", "NODES").catch(() => undefined)) as
        string | undefined;
      if (text === undefined) continue;
      return text
        .split("\n")
        .filter((line) => line.length > 0 && !/\bfail\b/u.test(line.split(" ")[2] ?? ""))
        .map((line) => {
          const [id = "", address = "", flags = "", masterId = ""] = line.split(" ");
          const port = Number(address.slice(address.indexOf(":") + 1, address.indexOf("@")));
          return { id, port, master: flags.includes("master"), masterId };
        });
    }
    return [];
  }

  /** The port of the node serving `slot`, as the first running node that answers says. */
  async owner(slot: number, except?: number): Promise<number> {
    for (const node of this.nodes.filter(running)) {
      if (node.server.port === except) continue;
      const owners = await slotOwners(node.client).catch(() => undefined);
      if (owners !== undefined) return owners[slot] ?? -1;
    }
    return -1;
  }

  byPort(port: number): Node | undefined {
    return this.nodes.find((node) => node.server.port === port);
  }

  /** Every running node says cluster_state:ok and names the same owner for every slot. */
  async stable(): Promise<boolean> {
    let reference: Int32Array | undefined;
    for (const node of this.nodes.filter(running)) {
      if ((await clusterInfo(node.client)).get("cluster_state") !== "ok") return false;
      const owners = await slotOwners(node.client);
      if (owners.includes(-1)) return false;
      if (reference !== undefined && owners.some((port, s) => port !== reference?.[s])) {
        return false;
      }
      reference = owners;
    }
    return true;
  }

  async replicasInSync(): Promise<boolean> {
    for (const node of this.nodes.filter(running)) {
      const text = String(await node.client.call("INFO", "replication"));
      if (text.includes("role:slave") && !text.includes("master_link_status:up")) return false;
    }
    return true;
  }

  async stop(): Promise<void> {
    for (const node of this.nodes) node.client.disconnect();
    await Promise.all(this.nodes.map((node) => node.server.kill()));
    await rm(this.root, { recursive: true, force: true });
  }
}
