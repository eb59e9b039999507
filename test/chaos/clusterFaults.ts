import { keySlot } from "../../src/core/keySlot.js";
import { beginSlotMigration } from "../support/slotMigration.js";
import { SETTLE_MS, type ChaosCluster } from "./clusterNodes.js";
import { SOURCE_STREAMS } from "./groups.js";
import { pollUntil } from "./quiescence.js";

/** MIGRATE's timeout: a long run's stream holds hundreds of MiB. */
const MIGRATE_TIMEOUT_MS = 60_000;

/** The slot of one source stream drawn by `pick`, and the master serving it. */
async function target(cluster: ChaosCluster, pick: number) {
  const stream = SOURCE_STREAMS[pick % SOURCE_STREAMS.length] ?? "";
  const slot = keySlot(stream);
  return { stream, slot, port: await cluster.owner(slot) };
}

/**
 * SIGKILL of the master serving a drawn stream: the cluster promotes its replica (writes not
 * replicated yet are lost, as asynchronous replication loses them); once it has, the master
 * restarts empty and rejoins as the new master's replica, and the fault ends when it is in sync.
 */
export async function killMaster(cluster: ChaosCluster, pick: number): Promise<string> {
  const { stream, slot, port } = await target(cluster, pick);
  const victim = cluster.byPort(port);
  if (victim === undefined) return `no master serves ${stream}`;
  const started = Date.now();
  await victim.server.kill();
  const moved = async () => ![-1, port].includes(await cluster.owner(slot, port));
  const promoted = await pollUntil(moved, SETTLE_MS);
  const promotedMs = Date.now() - started;
  // Never back before a replica took over: without persistence it would serve the slots empty.
  if (!promoted) return `master ${port} (${stream}) killed: no replica promoted, left down`;
  await victim.server.start();
  const settled = async () => (await cluster.replicasInSync()) && (await cluster.stable());
  const synced = await pollUntil(settled, SETTLE_MS);
  const to = await cluster.owner(slot);
  return `master ${port} (${stream}) killed, ${to} promoted after ${promotedMs} ms; back as a replica, ${synced ? "in sync" : "NOT in sync"} after ${Date.now() - started} ms`;
}

/** CLUSTER FAILOVER on the replica of the master serving a drawn stream. */
export async function failover(cluster: ChaosCluster, pick: number): Promise<string> {
  const { stream, slot, port } = await target(cluster, pick);
  const seen = await cluster.seen();
  const master = seen.find((node) => node.port === port);
  const replica = seen.find((node) => !node.master && node.masterId === master?.id);
  const client = replica === undefined ? undefined : cluster.byPort(replica.port)?.client;
  if (replica === undefined || client === undefined) return `no replica of ${port} (${stream})`;
  await client.call("CLUSTER", "FAILOVER");
  const taken = async () =>
    (await cluster.owner(slot)) === replica.port && (await cluster.stable());
  const done = await pollUntil(taken, 20_000);
  return `${stream}: replica ${replica.port} ${done ? "took over from" : "did NOT take over within 20 s from"} ${port}`;
}

/**
 * A slot migration of a drawn stream's slot to another master, as `redis-cli --cluster reshard`
 * does it (SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE; test/support's slotMigration.ts),
 * one key per MIGRATE: between two, the slot's keys are split across the masters (ASK, TRYAGAIN).
 */
export async function migrateSlot(cluster: ChaosCluster, pick: number): Promise<string> {
  const { stream, slot, port } = await target(cluster, pick);
  const masters = (await cluster.seen()).filter((node) => node.master);
  const source = masters.find((node) => node.port === port);
  const others = masters.filter((node) => node.port !== port);
  const to = others[Math.floor(pick / SOURCE_STREAMS.length) % Math.max(1, others.length)];
  const from = cluster.byPort(port);
  const into = to === undefined ? undefined : cluster.byPort(to.port);
  if (source === undefined || to === undefined || from === undefined || into === undefined) {
    return `no other master for slot ${slot} (${stream})`;
  }
  const steps = await beginSlotMigration({
    slot,
    source: { id: source.id, admin: from.client },
    target: { id: to.id, port: to.port, admin: into.client },
    others: others
      .filter((node) => node !== to)
      .flatMap((node) => cluster.byPort(node.port)?.client ?? []),
    migrateTimeoutMs: MIGRATE_TIMEOUT_MS,
  });
  const keys = (await from.client.call("CLUSTER", "GETKEYSINSLOT", slot, 1000)) as string[];
  for (const key of keys) await steps.moveKeys([key]);
  await steps.finish();
  return `slot ${slot} (${stream}) ${port} -> ${to.port}, ${keys.length} keys one by one`;
}
