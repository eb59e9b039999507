import { checkHistory, type Verdict } from "./checker.js";
import { mergeLocal } from "./failoverLoss.js";
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
 * promotion answers, and a failover (standalone replays its AOF, fsynced at every write).
 */
function lossy(topology: TopologyName, kind: string): boolean {
  return kind === "failover" || (kind === "kill-redis" && topology === "cluster");
}

export interface JudgeInput {
  topology: TopologyName;
  /** Redis's history at the end, and what the parties recorded outside Redis. */
  history: History;
  local: readonly LocalRecord[];
  faults: readonly AppliedFault[];
  /** Sentinel: every `+switch-master` seen (ours and the Sentinels' own); undefined elsewhere. */
  switches: readonly number[] | undefined;
}

/**
 * When writes may have been lost, and connections cut. On Sentinel the switches themselves
 * (a failover fault that never switched lost nothing; one the Sentinels made alone did cut);
 * elsewhere, the faults that do it.
 */
function failoverTimes(input: JudgeInput): { lossy: number[]; cuts: number[] } {
  const { faults, switches } = input;
  const happened = faults.filter((fault) => fault.happened !== false);
  const cutKinds = switches === undefined ? CUTS : CUTS.filter((kind) => kind !== "failover");
  const cuts = happened.filter((fault) => cutKinds.includes(fault.kind)).map((fault) => fault.at);
  if (switches !== undefined) return { lossy: [...switches], cuts: [...cuts, ...switches] };
  const lost = happened.filter((fault) => lossy(input.topology, fault.kind));
  return { lossy: lost.map((fault) => fault.at), cuts };
}

/**
 * The checker's verdict on a run: Redis's history merged with the local logs (what a failover
 * dropped told apart, failoverLoss.ts), then every invariant (checker.ts).
 */
export function judge(input: JudgeInput): Verdict {
  const { lossy: lossPoints, cuts } = failoverTimes(input);
  const merged = mergeLocal(input.history, input.local, lossPoints);
  const verdict = checkHistory(merged.history, cuts, lossPoints, merged);
  verdict.violations.push(...merged.violations);
  return verdict;
}
