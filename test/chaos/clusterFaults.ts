import { keySlot } from "../../src/core/keySlot.js";
import { beginSlotMigration } from "../support/slotMigration.js";
import { SETTLE_MS, type ChaosCluster } from "./clusterNodes.js";
import {
  keysByMaster,
  openMigrations,
  ownSlots,
  selfViews,
  serves,
  type SelfView,
} from "./clusterSelf.js";
import { drawnMaster } from "./drawnMaster.js";
import { holdFailovers } from "./failoverHold.js";
import { SOURCE_STREAMS } from "./groups.js";
import { pollUntil } from "./quiescence.js";
import { waitForReplica, waitRemark } from "./replicaWait.js";
import { compareCopies } from "./busyKey.js";
import {
  finishMigration,
  MIGRATE_TIMEOUT_MS,
  replicated,
  resumeMigrations,
  settlement,
  undoMigration,
} from "./slotCompletion.js";
import type { FaultOutcome } from "./topology.js";

export { failover } from "./failover.js";
export { parseSelf } from "./clusterSelf.js";
export { settlement } from "./slotCompletion.js";

/** How long a master's kill waits for its replica to acknowledge its writes so far. */
const CAUGHT_UP_MS = 30_000;

/** How long the faults wait for replicas to acknowledge (WAIT): these defaults, or a test's. */
interface ReplicaWaits {
  caughtUpMs?: number;
  replicatedMs?: number;
}

/**
 * SIGKILL of the master serving a drawn stream: the cluster promotes its replica (writes not
 * replicated yet are lost, as asynchronous replication loses them); once it has, the master
 * restarts empty and rejoins as the new master's replica, and the fault ends when it is in sync.
 */
export async function killMaster(
  cluster: ChaosCluster,
  pick: number,
  { caughtUpMs = CAUGHT_UP_MS }: ReplicaWaits = {},
): Promise<FaultOutcome> {
  const { stream, slot, port } = await drawnMaster(cluster, pick);
  const victim = cluster.byPort(port);
  if (victim === undefined) return { note: `no master serves ${stream}` };
  const slots = await ownSlots(victim.client);
  // Its replica caught up first (WAIT): the kill loses the writes in flight, as asynchronous
  // replication does, not a resync's worth (seed 41: a replica promoted in the middle of one,
  // after a migration's RESTORE of a big stream, served that master's slots without it).
  const ack = await waitForReplica(victim.client, caughtUpMs);
  // The fault's time is the kill's, after that wait: the checker counts cuts and losses from it.
  const at = Date.now();
  const note = await kill(cluster, { stream, slot, port }, victim);
  const late = () => `its replica had not caught up within ${caughtUpMs} ms`;
  return { note: note + waitRemark(new Map([[port, ack]]), late), slots, at };
}

async function kill(
  cluster: ChaosCluster,
  { stream, slot, port }: { stream: string; slot: number; port: number },
  victim: NonNullable<ReturnType<ChaosCluster["byPort"]>>,
): Promise<string> {
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

/** The key MIGRATE was moving when it failed: BUSYKEY's two copies, compared (busyKey.ts). */
async function busyRemark(error: unknown, key: string, ends: Ends, cluster: ChaosCluster) {
  if (!(error instanceof Error && /BUSYKEY/u.test(error.message))) return "";
  const [from, to] = [ends.source, ends.target].map((end) => cluster.byPort(end.port)?.client);
  if (from === undefined || to === undefined) return "";
  const verdict = await compareCopies(from, to, key).catch((e: unknown) => ({ why: String(e) }));
  return `; ${key} on both: ${verdict.why}`;
}

type Ends = { source: SelfView; target: SelfView };

/** SETSLOT IMPORTING/MIGRATING, then the slot's keys one by one, then the slot to the target. */
async function migrateKeys(
  cluster: ChaosCluster,
  slot: number,
  { source, target }: Ends,
  progress: { moved: number; key: string },
): Promise<void> {
  const from = cluster.byPort(source.port)?.client;
  const into = cluster.byPort(target.port)?.client;
  if (from === undefined || into === undefined) throw new Error(`no client of ${source.port}`);
  const others = (await selfViews(cluster)).filter(
    (view) => view.master && view.id !== source.id && view.id !== target.id,
  );
  const steps = await beginSlotMigration({
    slot,
    source: { id: source.id, admin: from },
    target: { id: target.id, port: target.port, admin: into },
    others: others.flatMap((view) => cluster.byPort(view.port)?.client ?? []),
    migrateTimeoutMs: MIGRATE_TIMEOUT_MS,
  });
  const keys = (await from.call("CLUSTER", "GETKEYSINSLOT", slot, 1000)) as string[];
  for (const key of keys) {
    progress.key = key;
    await steps.moveKeys([key]);
    progress.moved += 1;
  }
  progress.key = "";
  await steps.finish();
}

/**
 * The migration and its end: finished (finishMigration) once any key moved, wherever the
 * slot's keys are by then; undone only when none did.
 */
async function migrate(cluster: ChaosCluster, slot: number, ends: Ends, what: string) {
  const before = (await keysByMaster(cluster, slot)).get(ends.target.port) ?? 0;
  const progress = { moved: 0, key: "" };
  let failure = "";
  try {
    await migrateKeys(cluster, slot, ends, progress);
  } catch (error) {
    failure = `: ${String(error)}${await busyRemark(error, progress.key, ends, cluster)}`;
    const gained = ((await keysByMaster(cluster, slot)).get(ends.target.port) ?? NaN) - before;
    const reached = Number.isNaN(gained) ? progress.moved : Math.max(gained, progress.moved);
    if (settlement(reached) === "undo") {
      const undone = await undoMigration(cluster, slot);
      return { note: `failed: ${what}${failure}; undone (no key had moved): ${undone}` };
    }
  }
  const finished = await finishMigration(cluster, slot, ends.target.id);
  const how = failure === "" ? `, ${progress.moved} keys one by one` : failure;
  // It happened, even when it ended split (HARNESS_FAILURE: the run fails on that instead).
  return { note: `${what}${how}; ${finished}`, happened: true };
}

/**
 * A slot migration of a drawn stream's slot to another master, as `redis-cli --cluster reshard`
 * does it (SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE; test/support's slotMigration.ts),
 * one key per MIGRATE: between two, the slot's keys are split across the masters (ASK, TRYAGAIN).
 * Both ends are the masters at the time, as they say themselves. The replicas' own failovers are
 * held back meanwhile (failoverHold.ts: MIGRATE of a big stream blocks a master for seconds). A
 * migration whose keys started to move is finished, wherever they are by then; one none of whose
 * keys moved is undone, a fault that did not happen ("failed:"); one the harness could not bring
 * back to one master per slot is a HARNESS_FAILURE (runChaos.ts fails the run on it).
 */
export async function migrateSlot(
  cluster: ChaosCluster,
  pick: number,
  { replicatedMs }: ReplicaWaits = {},
): Promise<FaultOutcome> {
  const stream = SOURCE_STREAMS[pick % SOURCE_STREAMS.length] ?? "";
  const slot = keySlot(stream);
  const slots = [[slot, slot] as const];
  if (!(await pollUntil(() => cluster.stable(), 20_000))) {
    return {
      note: `failed: cluster not stable for 20 s, slot ${slot} (${stream}) not migrated`,
      slots,
    };
  }
  const open = await openMigrations(cluster);
  const ends = migrationEnds(await selfViews(cluster), slot, Math.floor(pick / 3));
  if (open.size === 0 && typeof ends === "string") {
    return { note: `failed: ${ends}, slot ${slot} (${stream}) not migrated`, slots };
  }
  const way = typeof ends === "string" ? "" : ` ${ends.source.port} -> ${ends.target.port}`;
  const what = `slot ${slot} (${stream})${way}`;
  const release = await holdFailovers(cluster);
  let outcome: FaultOutcome = { note: `${what}: interrupted`, slots };
  try {
    outcome =
      typeof ends === "string" || open.size > 0
        ? await resumeMigrations(cluster, open)
        : { ...(await migrate(cluster, slot, ends, what)), slots };
  } catch (error) {
    // Whatever it left open is finished (or undone) before the fault ends, all the same.
    const left = await openMigrations(cluster);
    const after =
      left.size > 0 ? (await resumeMigrations(cluster, left)).note : "nothing left open";
    outcome = { note: `${what}: ${String(error)}; ${after}`, slots };
  } finally {
    outcome.note += (await replicated(cluster, replicatedMs)) + (await release());
  }
  return outcome;
}
