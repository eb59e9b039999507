import type { Redis } from "ioredis";
import type { PendingAuditor } from "./auditor.js";
import type { Violation } from "./checker.js";
import { prepareFleet, startFleet, type ChaosConsumer } from "./consumerFleet.js";
import type { Program } from "./consumerProgram.js";
import { CHAOS_GROUPS } from "./groups.js";
import { startJanitors, type JanitorSet } from "./janitors.js";
import type { LocalHistory } from "./localHistory.js";
import type { AppliedFault } from "./nemesis.js";
import { RecoveryWatch, type ScriptTime } from "./recovery.js";
import type { ChaosOptions } from "./runChaos.js";
import type { SlowCommands } from "./slowlog.js";
import type { Topology } from "./topology.js";

/** What a chaos run holds while it goes: its servers, parties, faults and findings so far. */
export interface Run {
  topology: Topology;
  admin: Redis;
  set: JanitorSet | undefined;
  consumers: ChaosConsumer[];
  programs: Program[];
  slow: SlowCommands;
  faults: AppliedFault[];
  /** What the stale leader's sweeps (fenceProbe.ts) saw go wrong. */
  fenceViolations: Violation[];
  auditor: PendingAuditor;
  recovery: RecoveryWatch | undefined;
  scriptTime: ScriptTime;
  /** What the parties recorded outside Redis (localHistory.ts). */
  local: LocalHistory;
  /** Where the run's time went, by phase (the report's phasesMs). */
  phasesMs: Record<string, number>;
  lapStarted: number;
}

export function lap(run: Run, phase: string): void {
  const now = Date.now();
  run.phasesMs[phase] = now - run.lapStarted;
  run.lapStarted = now;
}

/** The groups, the janitors and the consumers (whose programs are written while janitors boot). */
export async function startParties(
  run: Run,
  options: ChaosOptions,
  random: () => number,
): Promise<JanitorSet> {
  for (const group of CHAOS_GROUPS) {
    await run.admin.xgroup("CREATE", group.stream, group.group, "0", "MKSTREAM");
  }
  const [set, fleet] = await Promise.allSettled([
    startJanitors(options.cli, options.outDir, run.topology),
    prepareFleet(random, run.topology.consumerEnv, run.local),
  ]);
  // Whatever started is stopped by runChaos's finally, even if the other part failed.
  if (set.status === "fulfilled") run.set = set.value;
  if (fleet.status === "fulfilled") run.programs = fleet.value.programs;
  if (set.status === "rejected") throw set.reason;
  if (fleet.status === "rejected") throw fleet.reason;
  const recovery = new RecoveryWatch(set.value.janitors);
  run.recovery = recovery;
  run.topology.onRedisDown?.((down, at) => recovery.redisDown(down, at));
  run.consumers = fleet.value.consumers;
  startFleet(run.consumers);
  return set.value;
}
