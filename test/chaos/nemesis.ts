import type { Redis } from "ioredis";
import type { ChaosRedis, JanitorReplica } from "./servers.js";

type FaultKind =
  "kill-janitor" | "stop-janitor" | "kill-redis" | "client-kill" | "script-flush" | "stale-sweep";

/** A fault planned by the seed: when, what, on whom (janitor index, or -1: the leader). */
export interface PlannedFault {
  atMs: number;
  kind: FaultKind;
  target: number;
  /** How long a stopped janitor stays stopped, a killed one or Redis down. */
  holdMs: number;
}

export interface AppliedFault extends PlannedFault {
  /** Host time when applied, and the janitor actually hit (the leader is resolved at the time). */
  at: number;
  victim?: number;
  note?: string;
}

const WEIGHTS: [FaultKind, number][] = [
  ["kill-janitor", 3],
  ["stop-janitor", 3],
  ["kill-redis", 1],
  ["client-kill", 2],
  ["script-flush", 2],
  ["stale-sweep", 1],
];

function drawKind(random: () => number): FaultKind {
  const total = WEIGHTS.reduce((sum, [, weight]) => sum + weight, 0);
  let pick = random() * total;
  for (const [kind, weight] of WEIGHTS) {
    pick -= weight;
    if (pick < 0) return kind;
  }
  return "client-kill";
}

/** The whole schedule from the seed: one fault every 1.5 to 4 s from 2 s until `untilMs`. */
export function planFaults(
  random: () => number,
  untilMs: number,
  replicas: number,
): PlannedFault[] {
  const faults: PlannedFault[] = [];
  for (let at = 2000 + random() * 2000; at < untilMs; at += 1500 + random() * 2500) {
    const kind = drawKind(random);
    const target = random() < 0.6 ? -1 : Math.floor(random() * replicas);
    faults.push({ atMs: Math.round(at), kind, target, holdMs: Math.round(300 + random() * 3000) });
  }
  return faults;
}

export interface NemesisTargets {
  redis: ChaosRedis;
  admin: Redis;
  janitors: readonly JanitorReplica[];
  /** Called just before Redis is killed (its SLOWLOG dies with it). */
  beforeRedisKill: () => Promise<void>;
  /** A stale leader's sweep (fenceProbe.ts); says what it saw. */
  staleSweep: () => Promise<string>;
}

async function leaderIndex(janitors: readonly JanitorReplica[]): Promise<number | undefined> {
  const flags = await Promise.all(janitors.map((j) => j.metric("stream_janitor_leader")));
  const index = flags.findIndex((flag) => flag === 1);
  return index < 0 ? undefined : index;
}

const later = (ms: number, step: () => Promise<void> | void): void => {
  setTimeout(() => void step(), ms);
};

/** Applies one fault; a janitor or Redis it takes down comes back after holdMs. */
export async function applyFault(fault: PlannedFault, on: NemesisTargets): Promise<AppliedFault> {
  const applied: AppliedFault = { ...fault, at: Date.now() };
  if (fault.kind === "kill-janitor" || fault.kind === "stop-janitor") {
    const victim = fault.target >= 0 ? fault.target : await leaderIndex(on.janitors);
    const janitor = victim === undefined ? undefined : on.janitors[victim];
    if (janitor === undefined || !janitor.running || janitor.stopped) {
      return { ...applied, note: "no such janitor running (no leader?)" };
    }
    applied.victim = victim;
    if (fault.kind === "stop-janitor") {
      janitor.signal("SIGSTOP");
      later(fault.holdMs, () => janitor.signal("SIGCONT"));
    } else {
      await janitor.kill();
      later(fault.holdMs, () => janitor.start());
    }
  } else if (fault.kind === "kill-redis") {
    await on.beforeRedisKill().catch(() => undefined);
    await on.redis.kill();
    await new Promise((resolve) => setTimeout(resolve, Math.min(fault.holdMs, 1000)));
    await on.redis.start();
  } else if (fault.kind === "client-kill") {
    applied.note = String(await on.admin.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"));
  } else if (fault.kind === "script-flush") {
    applied.note = String(await on.admin.script("FLUSH"));
  } else {
    applied.note = await on.staleSweep();
  }
  return applied;
}
