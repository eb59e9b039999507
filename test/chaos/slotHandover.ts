import { parseSelf } from "./clusterSelf.js";

/** A Cluster node as its own line of CLUSTER NODES says it is (clusterSelf.ts), with its epoch. */
export interface NodeState {
  id: string;
  port: number;
  master: boolean;
  /** A replica's master's id. */
  replicaOf?: string;
  slots: [number, number][];
  /** Its config epoch (the line's 7th field). */
  epoch: number;
}

/** Slots that passed from one master to another between two looks at the Cluster. */
export interface SlotHandover {
  slots: [number, number][];
  from: { id: string; port: number };
  to: { id: string; port: number };
  /** The new master's config epoch after it. */
  epoch: number;
}

/** A node's own state from its CLUSTER NODES reply; undefined for no reply or no own line. */
export function nodeState(text: string): NodeState | undefined {
  const self = parseSelf(text);
  if (self === undefined) return undefined;
  const line = text.split("\n").find((l) => l.startsWith(`${self.id} `)) ?? "";
  const epoch = Number(line.split(" ")[6] ?? Number.NaN);
  const { id, port, master, slots, replicaOf } = self;
  return { id, port, master, slots, epoch, ...(replicaOf === undefined ? {} : { replicaOf }) };
}

function slotSet(ranges: readonly (readonly [number, number])[]): Set<number> {
  const slots = new Set<number>();
  for (const [first, last] of ranges) for (let s = first; s <= last; s += 1) slots.add(s);
  return slots;
}

/** Slots as inclusive ranges, in order. */
export function slotRanges(slots: Iterable<number>): [number, number][] {
  const ranges: [number, number][] = [];
  for (const slot of [...slots].sort((a, b) => a - b)) {
    const last = ranges[ranges.length - 1];
    if (last !== undefined && last[1] === slot - 1) last[1] = slot;
    else ranges.push([slot, slot]);
  }
  return ranges;
}

const endOf = (states: ReadonlyMap<string, NodeState>, id: string) => ({
  id,
  port: states.get(id)?.port ?? -1,
});

/**
 * A replica's promotion: a node that was a replica of M and now says it is a master serving
 * slots took M's slots over, whatever moved them (its replica's own election after M was failed,
 * CLUSTER FAILOVER, a takeover). The one exact sign is the node's own role: a config epoch bump
 * is no sign of it, since the target of a migration bumps its epoch too when it takes the slot
 * (CLUSTER SETSLOT NODE on the importing node, without consensus).
 */
function promotions(before: ReadonlyMap<string, NodeState>, after: ReadonlyMap<string, NodeState>) {
  const found: SlotHandover[] = [];
  for (const node of after.values()) {
    const was = before.get(node.id);
    if (!node.master || node.slots.length === 0 || was === undefined || was.master) continue;
    const from = endOf(before, was.replicaOf ?? "");
    found.push({ slots: node.slots, from, to: endOf(after, node.id), epoch: node.epoch });
  }
  return found;
}

/** Slots a node that was a master already gained, by the master that served them before. */
function migrations(before: ReadonlyMap<string, NodeState>, after: ReadonlyMap<string, NodeState>) {
  const found: SlotHandover[] = [];
  const ownerBefore = new Map<number, string>();
  for (const node of before.values()) {
    if (node.master) for (const slot of slotSet(node.slots)) ownerBefore.set(slot, node.id);
  }
  for (const node of after.values()) {
    const was = before.get(node.id);
    if (!node.master || was === undefined || !was.master) continue;
    const had = slotSet(was.slots);
    const bySource = new Map<string, number[]>();
    for (const slot of slotSet(node.slots)) {
      if (had.has(slot)) continue;
      const source = ownerBefore.get(slot) ?? "";
      bySource.set(source, [...(bySource.get(source) ?? []), slot]);
    }
    for (const [source, slots] of bySource) {
      const to = endOf(after, node.id);
      found.push({ slots: slotRanges(slots), from: endOf(before, source), to, epoch: node.epoch });
    }
  }
  return found;
}

/**
 * What changed hands between two looks at the Cluster (each node's last own line, by id): the
 * slots a promoted replica took over (failovers), and the slots a master that already was one
 * gained (migrations). A failover is never a migration: its new master was a replica before.
 */
export function diffSlotMaps(
  before: ReadonlyMap<string, NodeState>,
  after: ReadonlyMap<string, NodeState>,
): { failovers: SlotHandover[]; migrations: SlotHandover[] } {
  return { failovers: promotions(before, after), migrations: migrations(before, after) };
}
