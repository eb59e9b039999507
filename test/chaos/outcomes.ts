import type { Violation } from "./checker.js";
import { SWITCH_SLACK_MS, type Dropped } from "./failoverLoss.js";
import type { DeadLetter } from "./history.js";

/** What was done to one entry in one group: acknowledgements, purges, dead letters. */
export interface UnitRecords {
  key: string;
  group: string;
  acks: readonly string[];
  purges: readonly string[];
  dead: readonly DeadLetter[];
  /** Its acknowledgements and purges a failover dropped (failoverLoss.ts). */
  dropped: readonly Dropped[];
  /** Records a replica confirmed (WAIT). */
  confirmed: ReadonlySet<string>;
  /** When the primary switched (on Cluster: a loss of the unit's slot, failoverLoss.ts). */
  switches: readonly number[];
}

/** The outcomes the invariants count, and those a failover explains. */
export interface UnitOutcomes {
  acks: string[];
  dead: DeadLetter[];
  purged: number;
  /** Outcomes Redis still holds (dropped ones aside): none, and the entry is lost. */
  facts: number;
  explained: Violation[];
}

interface Outcome {
  kind: string;
  record: string;
  at: number;
  confirmed: boolean;
  dropped: boolean;
  letter?: DeadLetter;
}

const lastMs = (record: string): number => Number(record.slice(record.lastIndexOf(" ") + 1));

function outcomesOf(unit: UnitRecords): Outcome[] {
  const held = (kind: string) => (record: string) => ({
    kind,
    record,
    at: lastMs(record),
    confirmed: unit.confirmed.has(record),
    dropped: false,
  });
  return [
    ...unit.acks.map(held("acks")),
    ...unit.purges.map(held("purged")),
    // The janitor's writes are not confirmed: nothing tells whether its replica had them.
    ...unit.dead.map((letter) => ({
      kind: "dead letter",
      record: `${letter.stream} ${letter.id}`,
      at: letter.at,
      confirmed: false,
      dropped: false,
      letter,
    })),
    ...unit.dropped.map((d) => ({ ...d, confirmed: false, dropped: true })),
  ].sort((a, b) => a.at - b.at);
}

/**
 * A unit's outcomes across failovers (README, "What the checker holds the janitor to across a
 * failover"). An outcome no replica confirmed may be gone from the primary a switch promotes:
 * the entry is pending there again and is processed once more. So an unconfirmed outcome with a
 * switch after it (or up to SWITCH_SLACK_MS before it) and another outcome after that switch is
 * explained, not counted, whether Redis dropped it for good or holds it at the end (a replica
 * promoted before its resync ended brings back the old primary's writes). The latest outcome
 * always counts, dropped or not, and so does one a replica confirmed.
 */
export function outcomesAcrossFailovers(unit: UnitRecords): UnitOutcomes {
  const outcomes = outcomesOf(unit);
  const explained: Violation[] = [];
  const counted = outcomes.filter((outcome, index) => {
    const later = outcomes.slice(index + 1);
    const switchAt = unit.switches.find(
      (at) => at + SWITCH_SLACK_MS >= outcome.at && later.some((next) => next.at >= at),
    );
    if (outcome.confirmed || switchAt === undefined) return true;
    const how = outcome.dropped ? "dropped" : "unconfirmed";
    const detail = `${unit.group}: done again: ${outcome.kind} "${outcome.record}" at ${outcome.at}, ${how}, a failover at ${switchAt}`;
    explained.push({ invariant: "lost-by-failover", key: unit.key, detail });
    return false;
  });
  return {
    acks: counted.filter((o) => o.kind === "acks").map((o) => o.record),
    dead: counted.flatMap((o) => (o.letter === undefined ? [] : [o.letter])),
    purged: counted.filter((o) => o.kind === "purged").length,
    facts: outcomes.filter((o) => !o.dropped).length,
    explained,
  };
}
