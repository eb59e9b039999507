import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Verdict, Violation } from "./checker.js";
import type { ClusterFailover } from "./clusterWatch.js";
import type { History } from "./history.js";
import type { LocalRecord } from "./localHistory.js";
import type { AppliedFault } from "./nemesis.js";
import type { DownSpan } from "./downSpans.js";
import type { Recovery } from "./recovery.js";

export interface ChaosReport {
  seed: number;
  topology: string;
  durationMs: number;
  cli: string;
  counts: Record<string, number>;
  faults: Record<string, number>;
  consumers: { name: string; behaviour: string; starts: number; crashes: number }[];
  violations: Violation[];
  /**
   * Not violations: entries a failover dropped, or that were processed again after a failover
   * dropped their outcome (failoverLoss.ts), each with its record and the failover.
   */
  lostByFailover: Violation[];
  /** The first violations with the key's history and the faults within 5 s of it. */
  explained: unknown[];
  slowCommands: unknown[];
  /** Sentinel: when each `+switch-master` was seen (ours and the Sentinels' own). */
  switches: number[];
  /**
   * Cluster: every failover the watcher saw (clusterWatch.ts), with its slots, old and new master,
   * and whether the nemesis caused it or the Cluster made it alone ("self").
   */
  clusterFailovers: ClusterFailover[];
  /**
   * Cluster: when the master of the lease's slot refused every command (CLUSTERDOWN, or killed):
   * not counted in a recovery's time, as a standalone Redis's downtime is not.
   */
  clusterDown: DownSpan[];
  /** Leader lost -> next sweep, per fault that took the leader away. */
  recoveries: Recovery[];
  /** Wall time by phase: start (servers, janitors, consumers), schedule, quiet, checks. */
  phasesMs: Record<string, number>;
  ok: boolean;
}

const AROUND_MS = 5000;
const EXPLAINED = 10;

function explain(violation: Violation, history: History, faults: readonly AppliedFault[]): unknown {
  const key = violation.key;
  if (key === undefined) return { ...violation, faultsApplied: faults.length };
  const mine = (records: readonly string[]) => records.filter((r) => r.startsWith(`${key} `));
  const records = [...mine(history.deliveries), ...mine(history.acks), ...mine(history.stalls)];
  const times = records.map((r) => Number(r.slice(r.lastIndexOf(" ") + 1)));
  const from = Math.min(...times) - AROUND_MS;
  const to = Math.max(...times) + AROUND_MS;
  return {
    ...violation,
    produced: history.produced[key],
    deliveries: mine(history.deliveries),
    acks: mine(history.acks),
    stalls: mine(history.stalls),
    deadLetters: history.deadLetters
      .filter((letter) => letter.key === key)
      .map(({ body, ...letter }) => ({ ...letter, bodyBytes: body.length / 2 })),
    faultsAround: faults.filter((fault) => fault.at >= from && fault.at <= to),
  };
}

export function buildReport(
  base: Omit<
    ChaosReport,
    "violations" | "explained" | "ok" | "counts" | "faults" | "lostByFailover"
  >,
  verdict: Verdict,
  history: History,
  faults: readonly AppliedFault[],
): ChaosReport {
  const byKind: Record<string, number> = {};
  for (const fault of faults) {
    // A fault that did not happen (it failed, or its failover was never announced) apart.
    const kind = fault.happened === false ? `${fault.kind} (did not happen)` : fault.kind;
    byKind[kind] = (byKind[kind] ?? 0) + 1;
  }
  return {
    ...base,
    counts: verdict.counts,
    faults: byKind,
    violations: verdict.violations,
    lostByFailover: verdict.lostByFailover,
    explained: verdict.violations.slice(0, EXPLAINED).map((v) => explain(v, history, faults)),
    ok: verdict.violations.length === 0,
  };
}

export async function writeReport(
  outDir: string,
  report: ChaosReport,
  history: History,
  faults: readonly AppliedFault[],
  local: readonly LocalRecord[] = [],
): Promise<void> {
  // Bodies stay out of the history file: the produced ids locate them in the streams.
  const kept: Partial<History> = { ...history };
  delete kept.sourceBodies;
  // `local`: the harness's own local records (the consumers' are in local/, one file each).
  const file = JSON.stringify({ ...kept, faults, local }, null, 1);
  await writeFile(join(outDir, "history.json"), file);
  await writeFile(join(outDir, "report.json"), JSON.stringify(report, null, 2));
}

/** Cluster: the failovers seen, and the Cluster's own among them (the checker excuses their drops). */
function clusterFailoverLine(report: ChaosReport): string[] {
  if (report.topology !== "cluster") return [];
  const own = report.clusterFailovers.filter((failover) => failover.cause === "self");
  const ports = own.map((f) => `${f.from.port}->${f.to.port} at ${f.at}`).join(", ");
  const dropped = report.counts.droppedByUnrequestedFailover ?? 0;
  const downMs = report.clusterDown.reduce((sum, { down, up }) => sum + (up ?? down) - down, 0);
  return [
    `cluster failovers seen: ${report.clusterFailovers.length}, ${own.length} the Cluster's own${ports === "" ? "" : ` (${ports})`}, ${dropped} records dropped by those`,
    `the lease's master refused commands ${report.clusterDown.length} times, ${downMs} ms in all`,
  ];
}

function recoveryLine(recoveries: readonly Recovery[]): string {
  const times = recoveries
    .map((r) => r.recoveredMs)
    .filter((ms): ms is number => ms !== null)
    .sort((a, b) => a - b);
  const never = recoveries.length - times.length;
  if (recoveries.length === 0) return "no leader was taken away";
  const median = times[Math.floor(times.length / 2)] ?? 0;
  const max = times[times.length - 1] ?? 0;
  return `${recoveries.length} leaders lost, median ${median} ms, max ${max} ms${never > 0 ? `, ${never} not recovered within 30 s` : ""}`;
}

export function summary(report: ChaosReport): string {
  const invariants = new Map<string, number>();
  for (const v of report.violations)
    invariants.set(v.invariant, (invariants.get(v.invariant) ?? 0) + 1);
  const lines = [
    `chaos seed ${report.seed}, ${report.durationMs / 1000} s, ${report.topology}`,
    `counts: ${JSON.stringify(report.counts)}`,
    `faults: ${JSON.stringify(report.faults)}`,
    `recovery (leader lost -> next sweep): ${recoveryLine(report.recoveries)}`,
    `dropped by failovers (Redis's, not violations): ${report.counts.droppedByFailover ?? 0} records, ${report.lostByFailover.length} entries explained`,
    ...clusterFailoverLine(report),
    `time: ${Object.entries(report.phasesMs)
      .map(([phase, ms]) => `${phase} ${(ms / 1000).toFixed(1)} s`)
      .join(", ")}`,
    `consumers: ${report.consumers.map((c) => `${c.name} ${c.behaviour} ${c.starts} starts`).join(", ")}`,
    report.ok
      ? "every invariant holds"
      : `VIOLATIONS: ${[...invariants].map(([name, n]) => `${name} x${n}`).join(", ")}`,
  ];
  for (const violation of report.violations.slice(0, 5)) {
    lines.push(`  ${violation.invariant} ${violation.key ?? ""}: ${violation.detail}`);
  }
  return lines.join("\n");
}
