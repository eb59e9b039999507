import { keySlot } from "../../src/core/keySlot.js";
import { beginSlotMigration, type SlotMigration } from "../support/slotMigration.js";
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

/** A node's own line of CLUSTER NODES ("myself"): the only line a node cannot be stale about. */
export interface SelfView {
  id: string;
  port: number;
  master: boolean;
  /** The slot ranges it serves, and the slots it has MIGRATING or IMPORTING. */
  slots: [number, number][];
  open: number[];
}

/** Parses the "myself" line of a CLUSTER NODES reply (slots from its 9th field on). */
export function parseSelf(text: string): SelfView | undefined {
  const line = text.split("\n").find((l) => l.split(" ")[2]?.split(",").includes("myself"));
  if (line === undefined) return undefined;
  const [id = "", address = "", flags = "", ...rest] = line.trim().split(" ");
  const slots: [number, number][] = [];
  const open: number[] = [];
  for (const field of rest.slice(5)) {
    const opened = /^\[(\d+)-[<>]-/u.exec(field);
    if (opened !== null) open.push(Number(opened[1]));
    else {
      const [first = "", last = first] = field.split("-");
      slots.push([Number(first), Number(last)]);
    }
  }
  const port = Number(address.slice(address.indexOf(":") + 1, address.indexOf("@")));
  return { id, port, master: flags.split(",").includes("master"), slots, open };
}

const serves = (view: SelfView, slot: number) =>
  view.slots.some(([first, last]) => slot >= first && slot <= last);

/**
 * Both ends of a migration among the nodes that say they are masters serving slots: the slot's
 * one owner and another drawn by `pick`. None while any slot is open or two masters claim the
 * slot (a killed master back with its old slot map, before it learns it was replaced).
 */
export function migrationEnds(
  views: readonly SelfView[],
  slot: number,
  pick: number,
): { source: SelfView; target: SelfView } | string {
  const masters = views.filter((view) => view.master && view.slots.length > 0);
  const busy = views.find((view) => view.open.length > 0);
  if (busy !== undefined) return `slot ${String(busy.open[0])} open on ${busy.port}`;
  const owners = masters.filter((view) => serves(view, slot));
  const [source] = owners;
  if (owners.length !== 1 || source === undefined) {
    return `${owners.length} masters serve slot ${slot}`;
  }
  const others = masters.filter((view) => view !== source);
  const target = others[pick % Math.max(1, others.length)];
  return target === undefined ? `no other master for slot ${slot}` : { source, target };
}

/**
 * Where a failed migration's slot goes: to the target once the source holds none of its keys
 * (they all moved), else back to the source (a key of the slot on both ends stays on the target
 * unserved, as a failed `redis-cli --cluster reshard` leaves it).
 */
export function settlement(sourceKeys: number, targetKeys: number): "finish" | "undo" {
  return sourceKeys === 0 && targetKeys > 0 ? "finish" : "undo";
}

/** The own line of every running node that answers. */
async function selfViews(cluster: ChaosCluster): Promise<SelfView[]> {
  const texts = await Promise.all(
    cluster.clients().map((client) => client.call("CLUSTER", "NODES").catch(() => "")),
  );
  return texts.flatMap((text) => parseSelf(String(text)) ?? []);
}

const ignoreReplica = (error: unknown) => {
  // A node demoted meanwhile closed its open slots itself (and SETSLOT is for masters only).
  if (!(error instanceof Error && /only with masters/u.test(error.message))) throw error;
};

type Ends = { source: SelfView; target: SelfView };

/** Ends a migration that failed: finishes it or undoes it, as settlement() says. */
async function settle(cluster: ChaosCluster, slot: number, { source, target }: Ends) {
  const count = async (view: SelfView) =>
    Number(
      await cluster
        .byPort(view.port)
        ?.client.call("CLUSTER", "COUNTKEYSINSLOT", slot)
        .catch(() => Number.NaN),
    );
  const [sourceKeys, targetKeys] = [await count(source), await count(target)];
  const how = settlement(sourceKeys, targetKeys);
  const admin = (port: number) => cluster.byPort(port)?.client;
  if (how === "finish") {
    // The target first, as redis-cli does, so it owns the slot before anyone redirects.
    for (const view of [target, source, ...(await selfViews(cluster))]) {
      await admin(view.port)
        ?.call("CLUSTER", "SETSLOT", slot, "NODE", target.id)
        .catch(ignoreReplica);
    }
  } else {
    for (const view of [source, target]) {
      await admin(view.port)?.call("CLUSTER", "SETSLOT", slot, "STABLE").catch(ignoreReplica);
    }
  }
  const closed = async () =>
    (await selfViews(cluster)).every((view) => !view.open.includes(slot)) &&
    (await cluster.stable());
  const done = await pollUntil(closed, SETTLE_MS);
  const end =
    how === "finish"
      ? `finished: slot given to ${target.port}`
      : `undone: slot stays on ${source.port}`;
  return `${end} (${sourceKeys} keys left on ${source.port}, ${targetKeys} on ${target.port}), ${done ? "closed everywhere" : "NOT closed"}`;
}

/**
 * A slot migration of a drawn stream's slot to another master, as `redis-cli --cluster reshard`
 * does it (SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE; test/support's slotMigration.ts),
 * one key per MIGRATE: between two, the slot's keys are split across the masters (ASK, TRYAGAIN).
 * Both ends are the masters at the time, as they say themselves (a failover or a kill just
 * before changes them); a migration that fails is finished or undone before the fault ends, and
 * one undone is a fault that did not happen ("failed:").
 */
export async function migrateSlot(cluster: ChaosCluster, pick: number): Promise<string> {
  const stream = SOURCE_STREAMS[pick % SOURCE_STREAMS.length] ?? "";
  const slot = keySlot(stream);
  if (!(await pollUntil(() => cluster.stable(), 20_000))) {
    return `failed: cluster not stable for 20 s, slot ${slot} (${stream}) not migrated`;
  }
  const ends = migrationEnds(await selfViews(cluster), slot, Math.floor(pick / 3));
  if (typeof ends === "string") return `failed: ${ends}, slot ${slot} (${stream}) not migrated`;
  const { source, target } = ends;
  const from = cluster.byPort(source.port)?.client;
  const into = cluster.byPort(target.port)?.client;
  if (from === undefined || into === undefined) return `failed: no client of ${source.port}`;
  const others = (await selfViews(cluster)).filter(
    (view) => view.master && view.id !== source.id && view.id !== target.id,
  );
  const what = `slot ${slot} (${stream}) ${source.port} -> ${target.port}`;
  let moved: number;
  let steps: SlotMigration | undefined;
  try {
    steps = await beginSlotMigration({
      slot,
      source: { id: source.id, admin: from },
      target: { id: target.id, port: target.port, admin: into },
      others: others.flatMap((view) => cluster.byPort(view.port)?.client ?? []),
      migrateTimeoutMs: MIGRATE_TIMEOUT_MS,
    });
    const keys = (await from.call("CLUSTER", "GETKEYSINSLOT", slot, 1000)) as string[];
    for (const key of keys) await steps.moveKeys([key]);
    moved = keys.length;
    await steps.finish();
  } catch (error) {
    // Once more, as redis-cli's fix does: the rest of the keys, then the slot to the target.
    if (
      await steps?.finish().then(
        () => true,
        () => false,
      )
    ) {
      return `${what}: ${String(error)}; finished on a retry`;
    }
    const ended = await settle(cluster, slot, ends);
    return `${ended.startsWith("undone") ? "failed: " : ""}${what}: ${String(error)}; ${ended}`;
  }
  return `${what}, ${moved} keys one by one`;
}
