import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { keySlot } from "../../src/core/keySlot.js";
import {
  clusterInfo,
  keysOnEveryMaster,
  MASTERS,
  slotKeyTag,
  slotOwners,
  slotRange,
  waitForOneSlotMap,
  waitForReplicasInSync,
} from "./clusterSlots.js";
import { beginSlotMigration, type SlotMigration as MigrationSteps } from "./slotMigration.js";
import { spawnOnFreePort } from "./spawnOnFreePort.js";
import { waitFor } from "./waitFor.js";

/** One redis-server of the test cluster. */
export interface ClusterNode {
  readonly port: number;
  readonly address: string;
  /** The node id (CLUSTER MYID). */
  readonly id: string;
  readonly process: ChildProcess;
  /** A plain (non-cluster) client of this node alone; closed by stop(). */
  client(): Redis;
}

export interface RedisCluster {
  /** Every node, masters first, in slot order; replicas (if any) follow, one per master. */
  readonly nodes: readonly ClusterNode[];
  readonly masters: readonly ClusterNode[];
  /** `redis://127.0.0.1:<port of the first master>`: the seed url of the configuration. */
  readonly seedUrl: string;
  /** The other nodes as "host:port" (redis.nodes of the configuration). */
  readonly seedNodes: string[];
  /** A cluster client for the test itself; closed by stop(). */
  client(): Cluster;
  /** The node that currently serves `key`'s slot (asks the cluster, not the initial layout). */
  ownerOf(key: string): Promise<ClusterNode>;
  /** One key name per master, `${prefix}:<n>`, each owned by a different master (slot layout). */
  keysOnEveryMaster(prefix: string): string[];
  /** Moves one slot, keys included, from its owner to `to` (CLUSTER SETSLOT + MIGRATE). */
  migrateSlot(slot: number, to: ClusterNode): Promise<void>;
  /**
   * The same in steps: the slot is MIGRATING/IMPORTING until finish() moves the remaining keys
   * and gives the slot to `to` on every node; moveKeys() moves some keys before that.
   */
  startMigration(slot: number, to: ClusterNode): Promise<SlotMigration>;
  /** Waits until every running node reports cluster_state:ok and agrees on every slot's owner. */
  waitUntilStable(): Promise<void>;
  stop(): Promise<void>;
}

interface SlotMigration extends MigrationSteps {
  readonly from: ClusterNode;
}

export interface ClusterOptions {
  /** Adds one replica per master (for failover tests). */
  replicas?: boolean;
}

const NODE_ARGS = [
  "--cluster-enabled",
  "yes",
  "--cluster-config-file",
  "nodes.conf",
  // Small, so that a node that stops answering is marked failed (and failed over) quickly.
  "--cluster-node-timeout",
  "500",
  // The other masters keep serving their slots while one of them is down.
  "--cluster-require-full-coverage",
  "no",
  // Replicas sync at once (the default waits 5 s for more replicas to share one transfer).
  "--repl-diskless-sync-delay",
  "0",
];

/**
 * A real Redis Cluster on loopback: three masters (and optionally a replica each), joined with
 * CLUSTER ADDSLOTSRANGE and CLUSTER MEET (what `redis-cli --cluster create` does, without its
 * fixed one-second waits), ready once every node says cluster_state:ok. No persistence.
 */
export async function startRedisCluster(options: ClusterOptions = {}): Promise<RedisCluster> {
  const count = options.replicas === true ? MASTERS * 2 : MASTERS;
  const root = await mkdtemp(join(tmpdir(), "sj-cluster-"));
  const children: ChildProcess[] = [];
  const clients: (Redis | Cluster)[] = [];
  const killAll = (): void => {
    for (const child of children) child.kill("SIGKILL");
  };
  process.once("exit", killAll);

  const stop = async (): Promise<void> => {
    for (const client of clients) client.disconnect();
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = once(child, "exit");
        child.kill("SIGCONT");
        child.kill("SIGKILL");
        await exited;
      }),
    );
    process.off("exit", killAll);
    await rm(root, { recursive: true, force: true });
  };

  try {
    // Started side by side: each start waits for its server to answer.
    const nodes = await Promise.all(
      Array.from({ length: count }, async (): Promise<ClusterNode> => {
        const { port, child } = await spawnOnFreePort({
          root,
          extraArgs: NODE_ARGS,
          clusterBus: true,
        });
        children.push(child);
        const client = (): Redis => {
          const redis = new Redis({
            port,
            host: "127.0.0.1",
            protocol: 2,
            maxRetriesPerRequest: 1,
          });
          redis.on("error", () => undefined);
          clients.push(redis);
          return redis;
        };
        const id = String(await client().call("CLUSTER", "MYID"));
        return { port, address: `127.0.0.1:${port}`, id, process: child, client };
      }),
    );
    const admins = nodes.map((node) => node.client());
    const masters = nodes.slice(0, MASTERS);
    await Promise.all(
      masters.map(async (_, i) => {
        const [start, end] = slotRange(i, MASTERS);
        const admin = admins[i] as Redis;
        // Distinct epochs up front, so the nodes need not resolve a collision.
        await admin.call("CLUSTER", "SET-CONFIG-EPOCH", i + 1);
        await admin.call("CLUSTER", "ADDSLOTSRANGE", start, end);
      }),
    );
    const first = admins[0] as Redis;
    for (const node of nodes.slice(1)) await first.call("CLUSTER", "MEET", "127.0.0.1", node.port);
    await waitFor(
      async () => {
        for (const admin of admins)
          if ((await clusterInfo(admin)).get("cluster_known_nodes") !== String(count)) return false;
        return true;
      },
      { what: "every node to know every other" },
    );
    for (let i = MASTERS; i < count; i += 1) {
      const master = nodes[i - MASTERS] as ClusterNode;
      await (admins[i] as Redis).call("CLUSTER", "REPLICATE", master.id);
    }

    const cluster: RedisCluster = {
      nodes,
      masters,
      seedUrl: `redis://${(nodes[0] as ClusterNode).address}`,
      seedNodes: nodes.slice(1, MASTERS).map((node) => node.address),
      client() {
        const redis = new Cluster(
          masters.map((node) => ({ host: "127.0.0.1", port: node.port })),
          { redisOptions: { protocol: 2 }, retryDelayOnTryAgain: 20, retryDelayOnFailover: 50 },
        );
        redis.on("error", () => undefined);
        clients.push(redis);
        return redis;
      },
      async ownerOf(key) {
        const slot = keySlot(key);
        for (const [i, admin] of admins.entries()) {
          const child = (nodes[i] as ClusterNode).process;
          if (child.exitCode !== null || child.signalCode !== null) continue;
          const owners = await slotOwners(admin);
          const owner = nodes.find((node) => node.port === owners[slot]);
          if (owner !== undefined) return owner;
        }
        throw new Error(`no node owns slot ${slot}`);
      },
      keysOnEveryMaster,
      async startMigration(slot, to) {
        const from = await cluster.ownerOf(`{${slotKeyTag(slot)}}`);
        if (from === to) throw new Error(`slot ${slot} is on ${to.address} already`);
        const source = admins[nodes.indexOf(from)] as Redis;
        const target = admins[nodes.indexOf(to)] as Redis;
        const others = admins.filter(
          (admin, i) => admin !== source && admin !== target && isRunning(nodes[i]?.process),
        );
        const steps = await beginSlotMigration({
          slot,
          source: { id: from.id, admin: source },
          target: { id: to.id, port: to.port, admin: target },
          others,
        });
        return { from, ...steps };
      },
      async migrateSlot(slot, to) {
        if ((await cluster.ownerOf(`{${slotKeyTag(slot)}}`)) === to) return;
        await (await cluster.startMigration(slot, to)).finish();
      },
      async waitUntilStable() {
        await waitForOneSlotMap(admins.filter((_, i) => isRunning(nodes[i]?.process)));
      },
      stop,
    };
    await cluster.waitUntilStable();
    if (count > MASTERS) await waitForReplicasInSync(admins.slice(MASTERS));
    return cluster;
  } catch (error) {
    await stop();
    throw error;
  }
}

function isRunning(child: ChildProcess | undefined): boolean {
  return child !== undefined && child.exitCode === null && child.signalCode === null;
}

/** One cluster per test file: started before its tests, stopped after them. */
export function useRedisCluster(options: ClusterOptions = {}): { readonly cluster: RedisCluster } {
  let started: RedisCluster | undefined;
  beforeAll(async () => {
    started = await startRedisCluster(options);
  });
  afterAll(async () => {
    await started?.stop();
  });
  return {
    get cluster() {
      if (started === undefined) throw new Error("useRedisCluster: used outside a test");
      return started;
    },
  };
}
