import { checkHistory, type Cut, type Verdict } from "./checker.js";
import { mergeLocal, type Loss } from "./failoverLoss.js";
import type { History } from "./history.js";
import type { LocalRecord } from "./localHistory.js";
import type { AppliedFault } from "./nemesis.js";
import type { TopologyName } from "./topology.js";

/**
 * Faults that cut consumers' connections, so a reply in flight may be lost, or that may lose
 * writes already answered (a failover: replication is asynchronous); see checker.ts.
 */
const CUTS: readonly string[] = ["client-kill", "kill-redis", "failover"];

/**
 * Faults that may lose writes already answered: on Cluster a master's kill, which its replica's
 * promotion answers, a failover, and a slot's migration (its keys rewritten on a master whose
 * replica may not have them yet); standalone replays its AOF, fsynced at every write.
 */
function lossy(topology: TopologyName, fault: AppliedFault): boolean {
  if (topology !== "cluster") return fault.kind === "failover";
  // A migration recorded without its slot (an older history) loses nothing, as before.
  if (fault.kind === "migrate-slot") return fault.slots !== undefined;
  return fault.kind === "failover" || fault.kind === "kill-redis";
}

export interface JudgeInput {
  topology: TopologyName;
  /** Redis's history at the end, and what the parties recorded outside Redis. */
  history: History;
  local: readonly LocalRecord[];
  faults: readonly AppliedFault[];
  /** Sentinel: every `+switch-master` seen (ours and the Sentinels' own); undefined elsewhere. */
  switches: readonly number[] | undefined;
  /**
   * Cluster: the failovers the Cluster made alone (clusterWatch.ts), each with the slots its new
   * master took over: a loss of those slots' writes, and a cut, as a Sentinel switch is.
   */
  unrequested?: readonly { at: number; slots: readonly (readonly [number, number])[] }[];
}

/**
 * When writes may have been lost, and connections cut. On Sentinel the switches themselves
 * (a failover fault that never switched lost nothing; one the Sentinels made alone did cut);
 * elsewhere, the faults that do it, each on Cluster with the slots whose writes it may lose, and
 * the failovers the Cluster made alone.
 */
function failoverTimes(input: JudgeInput): { lossy: Loss[]; cuts: Cut[] } {
  const { faults, switches } = input;
  const happened = faults.filter((fault) => fault.happened !== false);
  const cutKinds = switches === undefined ? CUTS : CUTS.filter((kind) => kind !== "failover");
  const cuts = happened
    .filter((fault) => cutKinds.includes(fault.kind))
    .map(({ at, until }) => ({ at, until: until ?? at }));
  const instant = (at: number): Cut => ({ at, until: at });
  if (switches !== undefined) {
    return { lossy: switches.map((at) => ({ at })), cuts: [...cuts, ...switches.map(instant)] };
  }
  const lost = happened.filter((fault) => lossy(input.topology, fault));
  const losses: Loss[] = lost.map(({ at, slots, kind }) =>
    slots === undefined ? { at } : { at, slots, moves: kind === "migrate-slot" },
  );
  const own = input.unrequested ?? [];
  losses.push(...own.map(({ at, slots }) => ({ at, slots })));
  return { lossy: losses, cuts: [...cuts, ...own.map(({ at }) => instant(at))] };
}

/**
 * The checker's verdict on a run: Redis's history merged with the local logs (what a failover
 * dropped told apart, failoverLoss.ts), then every invariant (checker.ts). On Cluster, the count
 * of lossy faults recorded without their slots: each may explain a drop in any slot.
 */
export function judge(input: JudgeInput): Verdict {
  const { lossy: losses, cuts } = failoverTimes(input);
  const merged = mergeLocal(input.history, input.local, losses);
  const verdict = checkHistory(merged.history, cuts, losses, merged);
  verdict.violations.push(...merged.violations);
  if (input.topology === "cluster") {
    verdict.counts.lossyFaultsWithoutSlots = losses.filter((l) => l.slots === undefined).length;
    const own = new Set((input.unrequested ?? []).map(({ at }) => at));
    verdict.counts.unrequestedFailovers = input.unrequested?.length ?? 0;
    verdict.counts.droppedByUnrequestedFailover = merged.dropped.filter((d) =>
      own.has(d.switchAt),
    ).length;
  }
  return verdict;
}
