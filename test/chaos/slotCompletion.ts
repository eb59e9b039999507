import type { Redis } from "ioredis";
import { compareCopies } from "./busyKey.js";
import { SETTLE_MS, type ChaosCluster } from "./clusterNodes.js";
import { keysByMaster, selfViews, serves, type SelfView } from "./clusterSelf.js";
import { waitForReplica, waitRemark, type ReplicaAck } from "./replicaWait.js";
import type { FaultOutcome } from "./topology.js";
import { pollUntil } from "./quiescence.js";

/** MIGRATE's timeout: a long run's stream holds hundreds of MiB. */
export const MIGRATE_TIMEOUT_MS = 60_000;

/** Marks a fault's note the harness could not bring back to one owner per slot (runChaos.ts). */
const HARNESS_FAILURE = "HARNESS FAILURE";

const ignoreReplica = (error: unknown) => {
  // A node demoted meanwhile closed its open slots itself (and SETSLOT is for masters only).
  if (!(error instanceof Error && /only with masters/u.test(error.message))) throw error;
};

/**
 * One key from `from` (it serves the slot, MIGRATING) to the target (IMPORTING). BUSYKEY: the
 * target holds a copy already (a MIGRATE that timed out after the target stored it, or a source
 * failed over before its DEL reached the replica that replaced it): compareCopies() says
 * whether the source's may replace it; if not, the key stays on both and is returned in `kept`.
 */
async function moveKey(from: Redis, to: Redis, port: number, key: string, log: string[]) {
  const migrate = (...replace: string[]) =>
    from.call("MIGRATE", "127.0.0.1", port, "", 0, MIGRATE_TIMEOUT_MS, ...replace, "KEYS", key);
  try {
    await migrate();
    return true;
  } catch (error) {
    if (!(error instanceof Error && /BUSYKEY/u.test(error.message))) throw error;
  }
  const verdict = await compareCopies(from, to, key);
  log.push(`BUSYKEY ${key}: ${verdict.why}${verdict.replace ? ", moved over it" : ", kept both"}`);
  if (verdict.replace) await migrate("REPLACE");
  return verdict.replace;
}

/** Moves every key of the slot `holder` still has to the target; the keys it could not. */
async function drain(
  cluster: ChaosCluster,
  slot: number,
  holder: SelfView,
  target: SelfView,
  log: string[],
): Promise<string[]> {
  const from = cluster.byPort(holder.port)?.client;
  const to = cluster.byPort(target.port)?.client;
  if (from === undefined || to === undefined) throw new Error(`no client of ${holder.port}`);
  if (!serves(holder, slot)) {
    // Its keys are unreachable (it answers MOVED for them): left to be reported, not guessed at.
    return (await from.call("CLUSTER", "GETKEYSINSLOT", slot, 1000)) as string[];
  }
  // Both ends again: the holder may be a replica promoted since, with none of the source's state.
  await to.call("CLUSTER", "SETSLOT", slot, "IMPORTING", holder.id);
  await from.call("CLUSTER", "SETSLOT", slot, "MIGRATING", target.id);
  const kept: string[] = [];
  for (;;) {
    const keys = (await from.call("CLUSTER", "GETKEYSINSLOT", slot, 100 + kept.length)) as string[];
    const left = keys.filter((key) => !kept.includes(key));
    if (left.length === 0) return kept;
    for (const key of left) {
      if (!(await moveKey(from, to, target.port, key, log))) kept.push(key);
    }
  }
}

/** The slot's target as it is now: itself, or the master that replaced it (its own line says). */
function currentTarget(views: readonly SelfView[], targetId: string): SelfView | undefined {
  const target = views.find((view) => view.id === targetId);
  if (target?.master === true) return target;
  return views.find((view) => view.master && view.id === target?.replicaOf);
}

/** Every master's keys of the slot moved to the target, then the slot given to it everywhere. */
async function finishOnce(cluster: ChaosCluster, slot: number, targetId: string, log: string[]) {
  const views = await selfViews(cluster);
  const target = currentTarget(views, targetId);
  if (target === undefined) throw new Error(`target ${targetId.slice(0, 8)} not found`);
  const counts = await keysByMaster(cluster, slot);
  const kept: string[] = [];
  for (const holder of views.filter((v) => v.master && v.id !== target.id)) {
    const count = counts.get(holder.port) ?? Number.NaN;
    if (Number.isNaN(count)) throw new Error(`no COUNTKEYSINSLOT from ${holder.port}`);
    if (count === 0) continue;
    const left = await drain(cluster, slot, holder, target, log);
    kept.push(...left.map((key) => `${key} on ${holder.port}`));
  }
  // Not given to the target then: a master that loses a slot it holds keys of deletes them.
  if (kept.length > 0) return { target, kept };
  // The target first, as redis-cli does, so it owns the slot before anyone redirects.
  for (const view of [target, ...views.filter((v) => v.id !== target.id)]) {
    await cluster
      .byPort(view.port)
      ?.client.call("CLUSTER", "SETSLOT", slot, "NODE", target.id)
      .catch(ignoreReplica);
  }
  return { target, kept };
}

/** Whether the slot is closed on every node, its keys on `port` alone, and the map one. */
async function settledOn(cluster: ChaosCluster, slot: number, port: number): Promise<boolean> {
  const views = await selfViews(cluster);
  if (views.some((view) => view.open.includes(slot))) return false;
  if (views.some((view) => view.master && serves(view, slot) !== (view.port === port)))
    return false;
  const counts = await keysByMaster(cluster, slot);
  if ([...counts].some(([at, count]) => at !== port && count !== 0)) return false;
  return cluster.stable();
}

/**
 * Finishes a migration whose keys started to move, wherever they are now: the slot's keys on
 * any other master (the source, or the replica that replaced it) are moved to the target, and
 * the slot given to the target on every master, retried until it holds or SETTLE_MS passes.
 * What it did is in the returned text; a slot it could not bring to one master is marked
 * HARNESS_FAILURE, for the run to fail on rather than blame the janitor.
 */
export async function finishMigration(
  cluster: ChaosCluster,
  slot: number,
  targetId: string,
): Promise<string> {
  const log: string[] = [];
  const until = Date.now() + SETTLE_MS;
  let last = "";
  for (let attempt = 1; Date.now() < until; attempt += 1) {
    try {
      const { target, kept } = await finishOnce(cluster, slot, targetId, log);
      if (kept.length > 0) {
        const undone = await undoMigration(cluster, slot);
        return `${HARNESS_FAILURE}: slot ${slot} split, not given to ${target.port}: ${kept.join(", ")} not moved (${log.join("; ")}); ${undone}`;
      }
      if (await pollUntil(() => settledOn(cluster, slot, target.port), 10_000)) {
        const tries = attempt > 1 ? ` after ${attempt} tries (${last})` : "";
        return `finished: slot ${slot} on ${target.port} alone, closed everywhere${tries}${log.length > 0 ? `; ${log.join("; ")}` : ""}`;
      }
      last = "not settled";
    } catch (error) {
      last = String(error);
    }
  }
  return `${HARNESS_FAILURE}: slot ${slot} not finished within ${SETTLE_MS} ms: ${last}${log.length > 0 ? `; ${log.join("; ")}` : ""}`;
}

/** Closes a migration (none of whose keys moved): the slot stays with its owner, open nowhere. */
export async function undoMigration(cluster: ChaosCluster, slot: number): Promise<string> {
  const close = async () => {
    for (const view of await selfViews(cluster)) {
      if (!view.open.includes(slot)) continue;
      await cluster
        .byPort(view.port)
        ?.client.call("CLUSTER", "SETSLOT", slot, "STABLE")
        .catch(ignoreReplica);
    }
    const views = await selfViews(cluster);
    return views.every((view) => !view.open.includes(slot)) && (await cluster.stable());
  };
  if (await pollUntil(close, SETTLE_MS)) return `slot ${slot} closed everywhere, left to its owner`;
  return `${HARNESS_FAILURE}: slot ${slot} still open after ${SETTLE_MS} ms`;
}

/**
 * Where a failed migration's slot goes, by the keys of it that reached the target (beyond those
 * it held before): to the target once any did, else back to the source. Giving a slot back to
 * its source once keys moved would leave them unserved on the target.
 */
export function settlement(movedKeys: number): "finish" | "undo" {
  return movedKeys > 0 ? "finish" : "undo";
}

/**
 * Migrations an earlier fault left open (the harness stopped mid-way): each finished if its
 * target holds keys of the slot, else undone. This is the fault then, not a new migration.
 */
export async function resumeMigrations(
  cluster: ChaosCluster,
  open: Map<number, string>,
): Promise<FaultOutcome> {
  const notes: string[] = [];
  for (const [slot, targetId] of open) {
    const port = (await selfViews(cluster)).find((view) => view.id === targetId)?.port ?? -1;
    const held = (await keysByMaster(cluster, slot)).get(port) ?? 0;
    const end =
      settlement(held) === "finish"
        ? await finishMigration(cluster, slot, targetId)
        : `undone (no key had moved): ${await undoMigration(cluster, slot)}`;
    notes.push(`slot ${slot} left open towards ${port}: ${end}`);
  }
  const note = `interrupted migrations: ${notes.join("; ")}`;
  return { note, slots: [...open.keys()].map((slot) => [slot, slot] as const) };
}

/** The faults whose note says the harness left a slot split or open: the run fails on them. */
export function harnessFailures(
  faults: readonly { kind: string; at: number; note?: string }[],
): { invariant: string; detail: string }[] {
  return faults
    .filter((fault) => fault.note?.includes(HARNESS_FAILURE) === true)
    .map((fault) => ({
      invariant: "harness-slot-split",
      detail: `${fault.kind} at ${fault.at}: ${fault.note ?? ""}`,
    }));
}

/** How long a migration fault waits for each master's replica to acknowledge its writes. */
const REPLICATED_MS = 30_000;

/**
 * WAIT on every master: the migration's writes (RESTORE on the target, the DEL on the source)
 * reached a replica before the fault ends. Else the next fault's kill of a master promotes a
 * replica without the moved keys (seed 41: `shipments` gone 8 s after a kill that followed its
 * migration, its entries then produced into a new stream without the `couriers` group).
 */
export async function replicated(cluster: ChaosCluster, waitMs = REPLICATED_MS): Promise<string> {
  const acks = new Map<number, ReplicaAck>();
  for (const view of (await selfViews(cluster)).filter((v) => v.master)) {
    const admin = cluster.byPort(view.port)?.client;
    if (admin !== undefined) acks.set(view.port, await waitForReplica(admin, waitMs));
  }
  return waitRemark(
    acks,
    (late) =>
      `no replica of ${late.join(", ")} acknowledged the migration's writes within ${waitMs} ms`,
  );
}
