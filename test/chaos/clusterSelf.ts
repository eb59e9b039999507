import type { Redis } from "ioredis";
import type { ChaosCluster } from "./clusterNodes.js";

/** A node's own line of CLUSTER NODES ("myself"): the only line a node cannot be stale about. */
export interface SelfView {
  id: string;
  port: number;
  master: boolean;
  /** The slot ranges it serves, and the slots it has MIGRATING or IMPORTING. */
  slots: [number, number][];
  open: number[];
  /** A replica's master's id. */
  replicaOf?: string;
}

/** Parses the "myself" line of a CLUSTER NODES reply (slots from its 9th field on). */
export function parseSelf(text: string): SelfView | undefined {
  const line = text.split("\n").find((l) => l.split(" ")[2]?.split(",").includes("myself"));
  if (line === undefined) return undefined;
  const [id = "", address = "", flags = "", masterId = "-", ...rest] = line.trim().split(" ");
  const slots: [number, number][] = [];
  const open: number[] = [];
  for (const field of rest.slice(4)) {
    const opened = /^\[(\d+)-[<>]-/u.exec(field);
    if (opened !== null) open.push(Number(opened[1]));
    else {
      const [first = "", last = first] = field.split("-");
      slots.push([Number(first), Number(last)]);
    }
  }
  const port = Number(address.slice(address.indexOf(":") + 1, address.indexOf("@")));
  const master = flags.split(",").includes("master");
  return { id, port, master, slots, open, ...(master ? {} : { replicaOf: masterId }) };
}

/** Whether a CLUSTER NODES text flags any node failing (PFAIL "fail?" or FAIL "fail"). */
export function flagsFailing(text: string): boolean {
  return text
    .split("\n")
    .some((line) => (line.split(" ")[2] ?? "").split(",").some((flag) => flag.startsWith("fail")));
}

export const serves = (view: SelfView, slot: number): boolean =>
  view.slots.some(([first, last]) => slot >= first && slot <= last);

/** The own line of every running node that answers. */
export async function selfViews(cluster: ChaosCluster): Promise<SelfView[]> {
  const texts = await Promise.all(
    cluster.clients().map((client) => client.call("CLUSTER", "NODES").catch(() => "")),
  );
  return texts.flatMap((text) => parseSelf(String(text)) ?? []);
}

/** The slot ranges a node serves, as its own line says now (inclusive, as CLUSTER SLOTS). */
export async function ownSlots(admin: Redis | undefined): Promise<[number, number][]> {
  const text = (await admin?.call("CLUSTER", "NODES").catch(() => "")) as string | undefined;
  return parseSelf(text ?? "")?.slots ?? [];
}

/** The number of keys of `slot` each running master holds, by port (NaN: no answer). */
export async function keysByMaster(
  cluster: ChaosCluster,
  slot: number,
): Promise<Map<number, number>> {
  const counts = new Map<number, number>();
  for (const view of (await selfViews(cluster)).filter((v) => v.master)) {
    const admin = cluster.byPort(view.port)?.client;
    const count = await admin?.call("CLUSTER", "COUNTKEYSINSLOT", slot).catch(() => Number.NaN);
    counts.set(view.port, Number(count));
  }
  return counts;
}

/**
 * The migrations left open, as the nodes' own lines say: slot -> its target's id (a node with
 * "[slot-<-source]" is the target; one with "[slot->-target]" names it).
 */
export async function openMigrations(cluster: ChaosCluster): Promise<Map<number, string>> {
  const open = new Map<number, string>();
  for (const client of cluster.clients()) {
    const text = String(await client.call("CLUSTER", "NODES").catch(() => ""));
    const line = text.split("\n").find((l) => l.split(" ")[2]?.split(",").includes("myself"));
    const self = line?.split(" ")[0] ?? "";
    for (const [, slot, way, id] of line?.matchAll(/\[(\d+)-([<>])-(\w+)\]/gu) ?? []) {
      open.set(Number(slot), way === "<" ? self : (id ?? ""));
    }
  }
  return open;
}
