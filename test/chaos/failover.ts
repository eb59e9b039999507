import type { ChaosCluster } from "./clusterNodes.js";
import { ownSlots } from "./clusterSelf.js";
import { drawnMaster } from "./drawnMaster.js";
import { pollUntil } from "./quiescence.js";
import type { FaultOutcome } from "./topology.js";

/** How long the failover fault waits for its replica's takeover, and a stable Cluster after it. */
const TAKEOVER_MS = 20_000;

/** The failover fault's wait: this default, or a test's. */
export interface TakeoverWait {
  takeoverMs?: number;
}

/** Who the failover fault asked to take over, from whom, and the slots at stake. */
export interface FailoverAsked {
  stream: string;
  master: number;
  replica: number;
  slots: readonly (readonly [number, number])[];
}

/**
 * The failover fault's account once its wait ended: whether the replica serves the slot by then
 * ("stable": and every node agrees). One that had not taken over did not happen at the fault's
 * time: no slots, so the Cluster watcher counts a later takeover as the Cluster's own, at its own
 * time (clusterWatch.ts), and the checker counts one loss, not also one at the fault's time.
 */
export function takeoverOutcome(
  { stream, master, replica, slots }: FailoverAsked,
  took: "stable" | "unstable" | "no",
  waitMs: number,
): FaultOutcome {
  const who = `${stream}: replica ${replica}`;
  if (took === "stable") return { note: `${who} took over from ${master}`, slots };
  if (took === "unstable") {
    return {
      note: `${who} took over from ${master}, Cluster NOT stable within ${waitMs} ms`,
      slots,
    };
  }
  const later = "a failover that did not happen then (a later takeover is the Cluster's own)";
  return {
    note: `${who} did NOT take over within ${waitMs} ms from ${master}: ${later}`,
    happened: false,
  };
}

/** CLUSTER FAILOVER on the replica of the master serving a drawn stream. */
export async function failover(
  cluster: ChaosCluster,
  pick: number,
  { takeoverMs = TAKEOVER_MS }: TakeoverWait = {},
): Promise<FaultOutcome> {
  const { stream, slot, port } = await drawnMaster(cluster, pick);
  const seen = await cluster.seen();
  const master = seen.find((node) => node.port === port);
  const replica = seen.find((node) => !node.master && node.masterId === master?.id);
  const client = replica === undefined ? undefined : cluster.byPort(replica.port)?.client;
  if (replica === undefined || client === undefined) {
    return { note: `no replica of ${port} (${stream})` };
  }
  const slots = await ownSlots(cluster.byPort(port)?.client);
  await client.call("CLUSTER", "FAILOVER");
  const serving = async () => (await cluster.owner(slot)) === replica.port;
  const taken = async () => (await serving()) && (await cluster.stable());
  const asked = { stream, master: port, replica: replica.port, slots };
  if (await pollUntil(taken, takeoverMs)) return takeoverOutcome(asked, "stable", takeoverMs);
  return takeoverOutcome(asked, (await serving()) ? "unstable" : "no", takeoverMs);
}
