import { keySlot } from "../../src/core/keySlot.js";
import type { Violation } from "./checker.js";
import { CHAOS_GROUPS, historyKey, type HistoryKind } from "./groups.js";
import type { History } from "./history.js";
import type { LocalRecord } from "./localHistory.js";

/**
 * A write Redis answered and no longer held at the end, unconfirmed by the replica, with a
 * failover (a `+switch-master`, or a Cluster master's loss) after it: asynchronous replication
 * dropped it, as Redis documents. Not the janitor's doing.
 */
export interface Dropped {
  kind: HistoryKind;
  /** The entry's key (the record's first field). */
  key: string;
  record: string;
  /** When Redis answered it, and the failover that dropped it. */
  at: number;
  switchAt: number;
}

export interface Merged {
  /** Redis's history, plus what only the local logs hold, less what a failover dropped. */
  history: History;
  dropped: Dropped[];
  /** Every record a replica confirmed (WAIT). */
  confirmed: Set<string>;
  /** Answered writes gone without a failover to drop them, or gone though a replica had them. */
  violations: Violation[];
}

/**
 * The old primary answers writes until the Sentinels demote it and the proxies follow, which is
 * after they announce the switch: a write answered this long after a switch may still be dropped.
 */
export const SWITCH_SLACK_MS = 5000;

/**
 * A moment writes may have been lost: a `+switch-master`, or a Cluster fault. On Cluster, only
 * writes of `slots` (the slots the lost master served, or the slot migrated); undefined: of any
 * slot (one primary, or a fault recorded without its slots).
 */
export interface Loss {
  at: number;
  slots?: readonly (readonly [number, number])[];
  /**
   * A Cluster slot's migration: it rewrites the slot's keys on another master, whose replica
   * confirmed none of them, so a replica's earlier confirmation no longer holds.
   */
  moves?: boolean;
}

/**
 * The slot of the history key a source stream's records live in (groups.ts): its entries, its
 * groups' acknowledgements, deliveries, stalls, purges and redrives, and its dead letters.
 */
export function streamSlot(stream: string): number {
  return keySlot(historyKey(stream, "produced"));
}

/** The slot a record lives in: "key stream id" for produced, "key group ..." for the others. */
function recordSlot(record: LocalRecord): number {
  const [key = "", second = ""] = record.record.split(" ");
  if (record.kind === "produced") return streamSlot(second);
  const group = CHAOS_GROUPS.find((g) => g.group === second);
  // The producer names each entry's key after its stream ("jobs:12").
  return streamSlot(group?.stream ?? key.split(":")[0] ?? "");
}

/** When writes of `slot` may have been lost, in order (only migrations: `moves`). */
export function lossesOf(losses: readonly Loss[], slot: number, moves = false): number[] {
  const hits = (loss: Loss) =>
    (loss.moves === true || !moves) &&
    (loss.slots === undefined || loss.slots.some(([first, last]) => slot >= first && slot <= last));
  return losses
    .filter(hits)
    .map((loss) => loss.at)
    .sort((a, b) => a - b);
}

/** A replica confirmed the record, and no migration of its slot moved it since. */
function stillConfirmed(losses: readonly Loss[], record: LocalRecord): boolean {
  if (record.confirmed !== true) return false;
  return !lossesOf(losses, recordSlot(record), true).some((s) => s + SWITCH_SLACK_MS >= record.at);
}

/** Kinds whose records are outcomes or facts the invariants count; the others are only merged. */
const CLASSIFIED: readonly HistoryKind[] = ["produced", "acks", "purged", "redriven"];

type ListKind = Exclude<HistoryKind, "produced">;

/** The first loss of the record's slot that may have dropped it (answered at `at`). */
function switchAfter(losses: readonly Loss[], record: LocalRecord): number | undefined {
  return lossesOf(losses, recordSlot(record)).find((s) => s + SWITCH_SLACK_MS >= record.at);
}

/** Whether the history holds a record: the lists' records by kind, as sets. */
function held(history: History, sets: Map<string, Set<string>>, local: LocalRecord): boolean {
  if (local.kind !== "produced") return sets.get(local.kind)?.has(local.record) === true;
  const [key = "", stream = "", id = ""] = local.record.split(" ");
  return history.produced[key] === `${stream} ${id}`;
}

function keep(history: History, sets: Map<string, Set<string>>, local: LocalRecord): void {
  if (local.kind !== "produced") {
    history[local.kind].push(local.record);
    sets.get(local.kind)?.add(local.record);
    return;
  }
  const [key = "", stream = "", id = ""] = local.record.split(" ");
  // A key Redis holds under another id was produced again after its first id was dropped.
  history.produced[key] ??= `${stream} ${id}`;
}

/**
 * What the checker holds the janitor to across a failover (README, "Chaos test"): each record a
 * party wrote is a fact if Redis still holds it at the end, or a replica confirmed it (WAIT). One
 * Redis answered but no longer holds, unconfirmed, with a failover after it (on Cluster, a loss
 * of the record's own slot: its master's kill or failover, or the slot's migration), was dropped
 * by Redis (`dropped`); the checker explains with it the entry that vanished, or was processed
 * again. Any other answered record that is gone is a violation: `confirmed-write-lost` (a
 * replica had it), `history-lost` (no failover dropped it). Records in Redis that no local log
 * holds (the reply was lost to a cut) are facts as they are.
 */
export function mergeLocal(
  redis: History,
  local: readonly LocalRecord[],
  losses: readonly Loss[],
): Merged {
  const history: History = {
    ...redis,
    produced: { ...redis.produced },
    acks: [...redis.acks],
    deliveries: [...redis.deliveries],
    stalls: [...redis.stalls],
    purged: [...redis.purged],
    redriven: [...redis.redriven],
  };
  const kinds: ListKind[] = ["acks", "deliveries", "stalls", "purged", "redriven"];
  const sets = new Map(kinds.map((kind) => [kind, new Set(history[kind])]));
  const dropped: Dropped[] = [];
  const violations: Violation[] = [];
  const confirmed = new Set(local.filter((r) => stillConfirmed(losses, r)).map((r) => r.record));
  for (const record of local) {
    if (held(history, sets, record)) continue;
    if (!CLASSIFIED.includes(record.kind)) {
      keep(history, sets, record);
      continue;
    }
    const key = record.record.split(" ")[0] ?? "";
    const switchAt = switchAfter(losses, record);
    const what = `${record.kind} record "${record.record}" answered at ${record.at}`;
    if (confirmed.has(record.record)) {
      violations.push({ invariant: "confirmed-write-lost", key, detail: `${what}, gone` });
      keep(history, sets, record);
    } else if (switchAt === undefined) {
      const detail = `${what}, gone, and no failover after it`;
      violations.push({ invariant: "history-lost", key, detail });
      keep(history, sets, record);
    } else {
      dropped.push({ kind: record.kind, key, record: record.record, at: record.at, switchAt });
      // A dropped entry was produced all the same: its groups account for it (checker.ts).
      if (record.kind === "produced") keep(history, sets, record);
    }
  }
  return { history, dropped, confirmed, violations };
}

/** Dropped outcomes (acks, purges) by "key group", and dropped entries by key. */
export function byUnit(dropped: readonly Dropped[]): {
  dropped: Map<string, Dropped[]>;
  droppedEntries: Map<string, Dropped>;
} {
  const units = new Map<string, Dropped[]>();
  const entries = new Map<string, Dropped>();
  for (const record of dropped) {
    if (record.kind === "produced") entries.set(record.key, record);
    const unit = record.record.split(" ").slice(0, 2).join(" ");
    if (record.kind !== "produced") units.set(unit, [...(units.get(unit) ?? []), record]);
  }
  return { dropped: units, droppedEntries: entries };
}
