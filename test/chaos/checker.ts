import type { History } from "./history.js";
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
  collateral: number;
}

/** Every invariant on the recorded history; counts for the summary. */
export function checkHistory(history: History): Verdict {
  const seen: Seen = {
    acks: tally(history.acks),
    deliveries: tally(history.deliveries),
    crashes: tally(history.crashes),
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
