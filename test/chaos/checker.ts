import type { DeadLetter, History } from "./history.js";
import { CHAOS_GROUPS, type ChaosGroup } from "./groups.js";
import { byUnit, lossesOf, streamSlot, type Dropped, type Loss } from "./failoverLoss.js";
import { outcomesAcrossFailovers } from "./outcomes.js";

export interface Violation {
  invariant: string;
  key?: string;
  detail: string;
}

export interface Verdict {
  violations: Violation[];
  counts: Record<string, number>;
  /** What a failover dropped, and the entries it explains (failoverLoss.ts): not violations. */
  lostByFailover: Violation[];
}

/** Records by their first two fields, "key group": each produced entry once per group. */
function tally(records: readonly string[]): Map<string, string[]> {
  const byUnit = new Map<string, string[]>();
  for (const record of records) {
    const [key = "", group = ""] = record.split(" ");
    const unit = `${key} ${group}`;
    byUnit.set(unit, [...(byUnit.get(unit) ?? []), record]);
  }
  return byUnit;
}

/**
 * Deliveries the janitor let happen, against the consumer's own re-reads. A read of new entries
 * (`>`, a requeued copy included) is one; so is a read of one's own PEL when the entry's previous
 * delivery went to another consumer (a reassign hand-off). A consumer re-reading what it already
 * held (a restart reading its PEL, the README loop's XCLAIM to itself, a hot loop) is its own.
 */
function splitDeliveries(records: readonly string[]): { janitor: number; own: number } {
  let janitor = 0;
  let own = 0;
  let holder = "";
  for (const record of records) {
    const [, , , , , how = "", consumer = ""] = record.split(" ");
    if (how === "new" || (how === "own" && consumer !== holder)) janitor += 1;
    else own += 1;
    holder = consumer;
  }
  return { janitor, own };
}

/** A connection cut: from when the fault struck to when it had struck everywhere (host ms). */
export interface Cut {
  at: number;
  until: number;
}

interface Seen {
  acks: Map<string, string[]>;
  deliveries: Map<string, string[]>;
  stalls: Map<string, string[]>;
  purged: Map<string, string[]>;
  redriven: Map<string, string[]>;
  deadLetters: Map<string, DeadLetter[]>;
  /** When the nemesis cut connections (a reply, or a delivery, may have been lost). */
  cuts: readonly Cut[];
  /** When a failover may have lost acknowledged writes (a delivery among them), of which slots. */
  lossy: readonly Loss[];
  /** Outcomes (acks, purges) a failover dropped, by "key group"; entries it dropped, by key. */
  dropped: Map<string, Dropped[]>;
  droppedEntries: Map<string, Dropped>;
  /** Records a replica confirmed (WAIT): outcomes no failover can undo. */
  confirmed: ReadonlySet<string>;
  lostByFailover: Violation[];
  collateral: number;
}

/** Connection cuts between an entry's production and its dead letter (a cut's span overlapping). */
function cutsBetween(seen: Seen, producedMs: number, letter: DeadLetter): number {
  return seen.cuts.filter((cut) => cut.until >= producedMs && cut.at <= letter.at).length;
}

/**
 * One dead letter against the unit's history:
 * - x-delivery-count above the deliveries recorded plus the cuts meanwhile (a delivery goes
 *   unrecorded only when its reply is lost): the janitor counted deliveries that never happened.
 *   Not for reassign, whose hand-off counts one delivery no consumer read.
 * - a healthy entry dead-lettered (not by the dead-letter action) though its handling did not
 *   fail, nor its consumer crash or stall on it, maxDeliveries times (half that under reassign,
 *   where a hand-off and the read after it count two); cuts count as stalls (a lost reply leaves
 *   an entry pending with no consumer knowing).
 */
function checkLetter(unit: Unit, letter: DeadLetter, add: (i: string, d: string) => void): void {
  const { key, group, history, seen } = unit;
  const records = seen.deliveries.get(`${key} ${group.group}`) ?? [];
  const { own } = splitDeliveries(records);
  const cuts = cutsBetween(seen, unit.producedMs, letter);
  if (group.action !== "reassign") {
    const bound = group.maxDeliveries + 1 + own;
    if (letter.deliveries > bound) add("over-delivered", `x-delivery-count ${letter.deliveries}`);
    if (letter.deliveries > records.length + cuts) {
      const detail = `x-delivery-count ${letter.deliveries}, deliveries recorded ${records.length}, connection cuts meanwhile ${cuts}`;
      add("miscounted-deliveries", detail);
    }
  }
  if (letter.body !== history.sourceBodies[key]) add("bytes-changed", `dead letter ${letter.id}`);
  const stalls = (seen.stalls.get(`${key} ${group.group}`) ?? []).length;
  const needed = group.action === "reassign" ? group.maxDeliveries / 2 : group.maxDeliveries;
  if (!key.endsWith(":poison") && group.action !== "dead-letter" && stalls + cuts < needed) {
    seen.collateral += 1;
    add("collateral-dead-letter", `healthy, ${stalls} crashes or stalls held it, ${cuts} cuts`);
  }
}

interface Unit {
  key: string;
  group: ChaosGroup;
  producedMs: number;
  history: History;
  seen: Seen;
}

function explain(seen: Seen, dropped: Dropped, what: string): void {
  const detail = `${what}: ${dropped.kind} "${dropped.record}" answered at ${dropped.at}, dropped by the failover at ${dropped.switchAt}`;
  seen.lostByFailover.push({ invariant: "lost-by-failover", key: dropped.key, detail });
}

/** One produced entry in one of its stream's groups against every invariant. */
function checkUnit(unit: Unit, out: Violation[]): void {
  const { key, group, seen } = unit;
  const id = `${key} ${group.group}`;
  // Only a loss of the slot its records live in may have dropped any of them (failoverLoss.ts).
  const lossy = lossesOf(seen.lossy, streamSlot(group.stream));
  const redriven = (seen.redriven.get(id) ?? []).length;
  const add = (invariant: string, detail: string) =>
    out.push({ invariant, key, detail: `${group.group}: ${detail}` });
  const { acks, dead, purged, facts, explained } = outcomesAcrossFailovers({
    key,
    group: group.group,
    acks: seen.acks.get(id) ?? [],
    purges: seen.purged.get(id) ?? [],
    dead: seen.deadLetters.get(id) ?? [],
    dropped: seen.dropped.get(id) ?? [],
    confirmed: seen.confirmed,
    switches: lossy,
  });
  seen.lostByFailover.push(...explained);
  if (facts === 0) {
    const entry = seen.droppedEntries.get(key);
    if (entry === undefined) add("lost", "neither acknowledged nor dead-lettered nor purged");
    else explain(seen, entry, `${group.group}: the entry itself`);
  }
  const outcomes = acks.length + dead.length + purged;
  if (purged > 0 && outcomes > purged) add("purged-yet-kept", "purged, and acked or dead-lettered");
  if (acks.length > 1) add("acked-twice", `${acks.length} acknowledgements took effect`);
  if (dead.length > 1) add("dead-lettered-twice", `${dead.length} dead letters`);
  if (acks.length > 0 && dead.length > 0) add("acked-and-dead-lettered", "both");
  if (key.endsWith(":poison") && acks.length > 0) add("poison-acked", "a poison entry was acked");
  // Each redrive starts the entry's deliveries again from 0; a failover may lose a delivery that
  // its consumer saw (and recorded), to be delivered again.
  const lost = lossy.filter((at) => at >= unit.producedMs).length;
  const bound = (group.maxDeliveries + 1) * (1 + redriven) + lost;
  const { janitor } = splitDeliveries(seen.deliveries.get(id) ?? []);
  if (janitor > bound) add("over-delivered", `delivered ${janitor} times, bound ${bound}`);
  for (const letter of seen.deadLetters.get(id) ?? []) checkLetter(unit, letter, add);
}

/**
 * Every invariant on the recorded history (`cuts`: when connections were cut or the primary
 * replaced, `lossy`: when a failover may have lost writes); counts for the summary.
 */
export function checkHistory(
  history: History,
  cuts: readonly Cut[],
  lossy: readonly Loss[],
  failovers: { dropped: readonly Dropped[]; confirmed: ReadonlySet<string> } = {
    dropped: [],
    confirmed: new Set(),
  },
): Verdict {
  const dropped = failovers.dropped;
  const deadLetters = new Map<string, DeadLetter[]>();
  for (const letter of history.deadLetters) {
    const unit = `${letter.key} ${letter.group}`;
    deadLetters.set(unit, [...(deadLetters.get(unit) ?? []), letter]);
  }
  const seen: Seen = {
    acks: tally(history.acks),
    deliveries: tally(history.deliveries),
    stalls: tally(history.stalls),
    purged: tally(history.purged),
    redriven: tally(history.redriven),
    deadLetters,
    cuts,
    lossy,
    ...byUnit(dropped),
    confirmed: failovers.confirmed,
    lostByFailover: [],
    collateral: 0,
  };
  const violations: Violation[] = [];
  const keys = Object.keys(history.produced);
  let units = 0;
  for (const key of keys) {
    const [stream = "", id = ""] = (history.produced[key] ?? "").split(" ");
    const producedMs = Number(id.split("-")[0]);
    for (const group of CHAOS_GROUPS.filter((g) => g.stream === stream)) {
      units += 1;
      checkUnit({ key, group, producedMs, history, seen }, violations);
    }
  }
  for (const unit of [...seen.acks.keys(), ...deadLetters.keys()]) {
    const [key = ""] = unit.split(" ");
    if (!(key in history.produced)) {
      violations.push({ invariant: "unknown-entry", key, detail: `${unit}: never produced` });
    }
  }
  const reads = history.deliveries.map((record) => record.split(" ")[5]);
  return {
    violations,
    lostByFailover: seen.lostByFailover,
    counts: {
      produced: keys.length,
      toProcess: units,
      poison: keys.filter((key) => key.endsWith(":poison")).length,
      acked: history.acks.length,
      deadLettered: history.deadLetters.length,
      deliveries: history.deliveries.length,
      ownPelReads: reads.filter((how) => how === "own").length,
      hotRereads: reads.filter((how) => how === "reread").length,
      stalls: history.stalls.length,
      purgedByOperator: history.purged.length,
      redrivenByOperator: history.redriven.length,
      collateralDeadLetters: seen.collateral,
      droppedByFailover: dropped.length,
      explainedByFailover: seen.lostByFailover.length,
      healthyDeadLetteredByAction: history.deadLetters.filter(
        (letter) => letter.reason === "action" && !letter.key.endsWith(":poison"),
      ).length,
    },
  };
}
