import type { DeadLetter, History } from "./history.js";
import { CHAOS_GROUPS } from "./groups.js";

export interface Violation {
  invariant: string;
  key?: string;
  detail: string;
}

export interface Verdict {
  violations: Violation[];
  counts: Record<string, number>;
}

function tally(records: readonly string[], field = 0): Map<string, string[]> {
  const byKey = new Map<string, string[]>();
  for (const record of records) {
    const key = record.split(" ")[field] ?? "";
    byKey.set(key, [...(byKey.get(key) ?? []), record]);
  }
  return byKey;
}

const groupOf = (key: string) => CHAOS_GROUPS.find((g) => key.startsWith(`${g.group}:`));

/**
 * A dead letter's x-delivery-count against the deliveries its consumers recorded. A delivery goes
 * unrecorded only when its reply is lost: a connection cut (CLIENT KILL, Redis killed) after
 * XREADGROUP ran. So the count may pass the record by the cuts between the entry's production and
 * its dead-lettering, no more; beyond that the janitor counted deliveries that never happened.
 * Not for reassign: there the janitor's hand-off counts one delivery that no consumer read.
 */
function miscounted(
  letter: DeadLetter,
  delivered: number,
  producedMs: number,
  cuts: readonly number[],
): string | undefined {
  const slack = cuts.filter((at) => at >= producedMs && at <= letter.at).length;
  if (letter.deliveries <= delivered + slack) return undefined;
  return `x-delivery-count ${letter.deliveries}, deliveries recorded ${delivered}, connection cuts meanwhile ${slack}`;
}

/** One produced key against every invariant on its own history. */
function checkKey(key: string, history: History, seen: Seen, out: Violation[]): void {
  const group = groupOf(key);
  const acks = seen.acks.get(key) ?? [];
  const dead = history.deadLetters.filter((letter) => letter.key === key);
  const delivered = (seen.deliveries.get(key) ?? []).length;
  const crashedHolding = (seen.crashes.get(key) ?? []).length;
  const add = (invariant: string, detail: string) => out.push({ invariant, key, detail });
  if (acks.length === 0 && dead.length === 0) add("lost", "neither acknowledged nor dead-lettered");
  if (acks.length > 1) add("acked-twice", `${acks.length} acknowledgements took effect`);
  if (dead.length > 1) add("dead-lettered-twice", `${dead.length} dead letters`);
  if (acks.length > 0 && dead.length > 0) add("acked-and-dead-lettered", "both");
  if (key.endsWith(":poison") && acks.length > 0) add("poison-acked", "a poison entry was acked");
  if (group === undefined) return;
  const bound = group.maxDeliveries + 1;
  if (delivered > bound) add("over-delivered", `delivered ${delivered} times, bound ${bound}`);
  for (const letter of dead) {
    if (letter.deliveries > bound) add("over-delivered", `x-delivery-count ${letter.deliveries}`);
    if (letter.body !== history.sourceBodies[key]) add("bytes-changed", `dead letter ${letter.id}`);
    const producedMs = Number((history.produced[key] ?? "").split(" ")[1]?.split("-")[0]);
    const wrong = miscounted(letter, delivered, producedMs, seen.cuts);
    if (wrong !== undefined && group.action !== "reassign") add("miscounted-deliveries", wrong);
    const healthy = !key.endsWith(":poison");
    if (healthy && group.action !== "dead-letter" && crashedHolding < group.maxDeliveries) {
      seen.collateral += 1;
      add("collateral-dead-letter", `healthy, ${crashedHolding} crashes held it, ${letter.reason}`);
    }
  }
}

interface Seen {
  acks: Map<string, string[]>;
  deliveries: Map<string, string[]>;
  crashes: Map<string, string[]>;
  /** When the nemesis cut connections (a reply may have been lost). */
  cuts: readonly number[];
  collateral: number;
}

/** Every invariant on the recorded history (`cuts`: when connections were cut); counts. */
export function checkHistory(history: History, cuts: readonly number[]): Verdict {
  const seen: Seen = {
    acks: tally(history.acks),
    deliveries: tally(history.deliveries),
    crashes: tally(history.crashes),
    cuts,
    collateral: 0,
  };
  const violations: Violation[] = [];
  const keys = Object.keys(history.produced);
  for (const key of keys) checkKey(key, history, seen, violations);
  for (const key of seen.acks.keys()) {
    if (!(key in history.produced)) {
      violations.push({ invariant: "unknown-ack", key, detail: "acked, never produced" });
    }
  }
  for (const letter of history.deadLetters) {
    if (!(letter.key in history.produced)) {
      const detail = `${letter.stream} ${letter.id} holds what was never produced`;
      violations.push({ invariant: "unknown-dead-letter", key: letter.key, detail });
    }
  }
  const poison = keys.filter((key) => key.endsWith(":poison")).length;
  return {
    violations,
    counts: {
      produced: keys.length,
      poison,
      acked: history.acks.length,
      deadLettered: history.deadLetters.length,
      deliveries: history.deliveries.length,
      crashedHolding: history.crashes.length,
      collateralDeadLetters: seen.collateral,
      healthyDeadLetteredByAction: history.deadLetters.filter(
        (letter) => letter.reason === "action" && !letter.key.endsWith(":poison"),
      ).length,
    },
  };
}
