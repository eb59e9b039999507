import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { freePort, spawnRedisServer } from "../../src/demo/spawnRedisServer.js";
import { keySlot } from "../../src/redis/keySlot.js";
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

export interface SlotMigration {
  readonly from: ClusterNode;
  moveKeys(keys: readonly string[]): Promise<void>;
  finish(): Promise<void>;
}

export interface ClusterOptions {
  /** Adds one replica per master (for failover tests). */
  replicas?: boolean;
}

const SLOTS = 16384;
/** Small, so that a node that stops answering is marked failed (and failed over) quickly. */
const NODE_TIMEOUT_MS = 500;
const MASTERS = 3;

/** The slot range of master i out of n, as `redis-cli --cluster create` lays them out. */
function slotRange(i: number, n: number): [number, number] {
  const size = SLOTS / n;
  return [Math.round(i * size), Math.round((i + 1) * size) - 1];
}

async function clusterInfo(redis: Redis): Promise<Map<string, string>> {
  const text = await redis.call("CLUSTER", "INFO");
  const fields = new Map<string, string>();
  for (const line of String(text).split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

/** The owner's port of every slot, as one node sees it (CLUSTER SLOTS). */
async function slotOwners(redis: Redis): Promise<Int32Array> {
  const owners = new Int32Array(SLOTS).fill(-1);
  const reply = (await redis.call("CLUSTER", "SLOTS")) as [number, number, [string, number]][];
  for (const [start, end, [, port]] of reply) owners.fill(port, start, end + 1);
  return owners;
}

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
    const nodes: ClusterNode[] = [];
    for (let i = 0; i < count; i += 1) {
      const port = await freePort();
      const dir = join(root, String(port));
      await mkdir(dir);
      const child = await spawnRedisServer({
        port,
        dir,
        extraArgs: [
          "--cluster-enabled",
          "yes",
          "--cluster-config-file",
          "nodes.conf",
          "--cluster-node-timeout",
          String(NODE_TIMEOUT_MS),
          // The other masters keep serving their slots while one of them is down.
          "--cluster-require-full-coverage",
          "no",
        ],
      });
      children.push(child);
      const client = (): Redis => {
        const redis = new Redis({ port, host: "127.0.0.1", protocol: 2, maxRetriesPerRequest: 1 });
        redis.on("error", () => undefined);
        clients.push(redis);
        return redis;
      };
      const admin = client();
      const id = String(await admin.call("CLUSTER", "MYID"));
      nodes.push({ port, address: `127.0.0.1:${port}`, id, process: child, client });
    }
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
          const child = children[i] as ChildProcess;
          if (child.exitCode !== null || child.signalCode !== null) continue;
          const owners = await slotOwners(admin);
          const owner = nodes.find((node) => node.port === owners[slot]);
          if (owner !== undefined) return owner;
        }
        throw new Error(`no node owns slot ${slot}`);
      },
      keysOnEveryMaster(prefix) {
        const keys: (string | undefined)[] = masters.map(() => undefined);
        for (let n = 0; keys.includes(undefined); n += 1) {
          const key = `${prefix}:${n}`;
          const slot = keySlot(key);
          const index = masters.findIndex((_, i) => {
            const [start, end] = slotRange(i, MASTERS);
            return slot >= start && slot <= end;
          });
          keys[index] ??= key;
        }
        return keys as string[];
      },
      async startMigration(slot, to) {
        const from = await cluster.ownerOf(`{${slotKeyTag(slot)}}`);
        if (from === to) throw new Error(`slot ${slot} is on ${to.address} already`);
        const source = admins[nodes.indexOf(from)] as Redis;
        const target = admins[nodes.indexOf(to)] as Redis;
        await target.call("CLUSTER", "SETSLOT", slot, "IMPORTING", from.id);
        await source.call("CLUSTER", "SETSLOT", slot, "MIGRATING", to.id);
        const moveKeys = async (keys: readonly string[]): Promise<void> => {
          if (keys.length === 0) return;
          await source.call("MIGRATE", "127.0.0.1", to.port, "", 0, 5000, "KEYS", ...keys);
        };
        return {
          from,
          moveKeys,
          async finish() {
            for (;;) {
              const keys = (await source.call("CLUSTER", "GETKEYSINSLOT", slot, 100)) as string[];
              if (keys.length === 0) break;
              await moveKeys(keys);
            }
            // The target first, as redis-cli does, so it owns the slot before anyone redirects.
            await target.call("CLUSTER", "SETSLOT", slot, "NODE", to.id);
            await source.call("CLUSTER", "SETSLOT", slot, "NODE", to.id);
            // The other masters learn it now rather than by gossip (replicas follow theirs).
            for (const [i, admin] of admins.entries())
              if (admin !== source && admin !== target && isRunning(children[i]))
                await admin
                  .call("CLUSTER", "SETSLOT", slot, "NODE", to.id)
                  .catch((error: unknown) => {
                    if (!(error instanceof Error && /only with masters/u.test(error.message)))
                      throw error;
                  });
          },
        };
      },
      async migrateSlot(slot, to) {
        if ((await cluster.ownerOf(`{${slotKeyTag(slot)}}`)) === to) return;
        await (await cluster.startMigration(slot, to)).finish();
      },
      async waitUntilStable() {
        await waitFor(
          async () => {
            let reference: Int32Array | undefined;
            for (const [i, admin] of admins.entries()) {
              if (!isRunning(children[i])) continue;
              if ((await clusterInfo(admin)).get("cluster_state") !== "ok") return false;
              const owners = await slotOwners(admin);
              if (owners.includes(-1)) return false;
              if (reference !== undefined && !owners.every((port, s) => port === reference?.[s]))
                return false;
              reference = owners;
            }
            return true;
          },
          { what: "cluster_state:ok and one slot map on every node" },
        );
      },
      stop,
    };
    await cluster.waitUntilStable();
    if (count > MASTERS) {
      await waitFor(
        async () => {
          for (const admin of admins.slice(MASTERS)) {
            const text = String(await admin.call("INFO", "replication"));
            if (!text.includes("master_link_status:up")) return false;
          }
          return true;
        },
        { what: "every replica to be in sync" },
      );
    }
    return cluster;
  } catch (error) {
    await stop();
    throw error;
  }
}

function isRunning(child: ChildProcess | undefined): boolean {
  return child !== undefined && child.exitCode === null && child.signalCode === null;
}

/** A hash tag whose slot is `slot` (found by search; slots are few). */
export function slotKeyTag(slot: number): string {
  for (let n = 0; ; n += 1) if (keySlot(`s${n}`) === slot) return `s${n}`;
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
