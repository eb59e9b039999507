import type { ChaosLink } from "./proxy.js";
import type { JanitorReplica } from "./servers.js";
import { NOT_ANNOUNCED, type FaultOutcome, type Topology } from "./topology.js";

/** Faults aimed at one janitor replica (the leader when the plan says -1). */
const AT_JANITOR = ["kill-janitor", "stop-janitor", "partition", "delay-link", "sighup"] as const;
type JanitorFault = (typeof AT_JANITOR)[number];
type FaultKind =
  | JanitorFault
  | "kill-redis"
  | "failover"
  | "migrate-slot"
  | "client-kill"
  | "script-flush"
  | "stale-sweep"
  | "dlq-redrive"
  | "dlq-purge";

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
  /** false: a fault that did not happen (it failed, or its failover was never announced). */
  happened?: boolean;
  /**
   * Host time when a fault that strikes node after node had struck them all (client-kill): a cut
   * may fall anywhere from `at` to then. Absent: the fault struck at `at`.
   */
  until?: number;
  /** Cluster: the slots the fault's master served when it hit (kill-redis, failover), or the slot migrated. */
  slots?: readonly (readonly [number, number])[];
}

const WEIGHTS: [FaultKind, number][] = [
  ["kill-janitor", 3],
  ["stop-janitor", 3],
  ["kill-redis", 1],
  ["failover", 3],
  ["migrate-slot", 2],
  ["client-kill", 2],
  ["script-flush", 2],
  ["stale-sweep", 1],
  ["partition", 2],
  ["delay-link", 2],
  ["sighup", 1],
  ["dlq-redrive", 1],
  ["dlq-purge", 1],
];

/**
 * The faults a topology can take: a restart, a failover, a slot migration (every janitor has a
 * link). The kinds a topology cannot take are left out before drawing, so adding one for Cluster
 * changes no schedule of the others.
 */
function allows(topology: Topology, kind: FaultKind): boolean {
  if (kind === "kill-redis") return topology.restart !== undefined;
  if (kind === "failover") return topology.failover !== undefined;
  if (kind === "migrate-slot") return topology.migrate !== undefined;
  return true;
}

function drawKind(random: () => number, weights: readonly [FaultKind, number][]): FaultKind {
  const total = weights.reduce((sum, [, weight]) => sum + weight, 0);
  let pick = random() * total;
  for (const [kind, weight] of weights) {
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
  topology: Topology,
): PlannedFault[] {
  const weights = WEIGHTS.filter(([kind]) => allows(topology, kind));
  const faults: PlannedFault[] = [];
  for (let at = 2000 + random() * 2000; at < untilMs; at += 1500 + random() * 2500) {
    const kind = drawKind(random, weights);
    const target = random() < 0.6 ? -1 : Math.floor(random() * replicas);
    faults.push({ atMs: Math.round(at), kind, target, holdMs: Math.round(300 + random() * 3000) });
  }
  return faults;
}

export interface NemesisTargets {
  topology: Topology;
  janitors: readonly JanitorReplica[];
  /** Each janitor's link to Redis, by index. */
  links: readonly ChaosLink[];
  /** Rewrites janitor `index`'s configuration (a changed one) and sends it SIGHUP. */
  reconfigure: (index: number) => Promise<string>;
  /** An operator's `dlq redrive` or `dlq purge` of one dead letter (operator.ts). */
  operate: (kind: "redrive" | "purge") => Promise<string>;
  /** Called just before the primary is killed or replaced (its SLOWLOG goes with it). */
  beforeRedisKill: () => Promise<void>;
  /** A stale leader's sweep (fenceProbe.ts); says what it saw. */
  staleSweep: () => Promise<string>;
  /** Told when Redis goes down and answers again (standalone's kill and restart). */
  redisDown?: (down: boolean) => void;
}

async function leaderIndex(janitors: readonly JanitorReplica[]): Promise<number | undefined> {
  const flags = await Promise.all(janitors.map((j) => j.metric("stream_janitor_leader")));
  const index = flags.findIndex((flag) => flag === 1);
  return index < 0 ? undefined : index;
}

const later = (ms: number, step: () => Promise<void> | void): void => {
  setTimeout(() => void step(), ms);
};

const isJanitorFault = (kind: FaultKind): kind is JanitorFault =>
  (AT_JANITOR as readonly string[]).includes(kind);

/** A latency added to one replica's link: 50 ms plus a tenth of the hold (up to about 380 ms). */
const linkDelay = (fault: PlannedFault) => 50 + Math.round(fault.holdMs / 10);

/** A fault on one janitor; what is taken away comes back after holdMs. */
async function janitorFault(
  kind: JanitorFault,
  fault: PlannedFault,
  on: NemesisTargets,
): Promise<AppliedFault> {
  const applied: AppliedFault = { ...fault, at: Date.now() };
  const victim = fault.target >= 0 ? fault.target : await leaderIndex(on.janitors);
  const janitor = victim === undefined ? undefined : on.janitors[victim];
  const link = victim === undefined ? undefined : on.links[victim];
  if (victim === undefined || janitor === undefined || link === undefined) {
    return { ...applied, note: "no leader" };
  }
  if (!janitor.running || janitor.stopped) return { ...applied, note: "not running" };
  applied.victim = victim;
  // The fault's time is when it strikes, not when the search for the leader began.
  applied.at = Date.now();
  if (kind === "stop-janitor") {
    janitor.signal("SIGSTOP");
    later(fault.holdMs, () => janitor.signal("SIGCONT"));
  } else if (kind === "kill-janitor") {
    await janitor.kill();
    later(fault.holdMs, () => janitor.start());
  } else if (kind === "partition") {
    link.partition();
    later(fault.holdMs, () => link.heal());
  } else if (kind === "delay-link") {
    link.setDelay(linkDelay(fault));
    applied.note = `${linkDelay(fault)} ms each way`;
    later(fault.holdMs, () => link.setDelay(0));
  } else {
    applied.note = await on.reconfigure(victim);
  }
  return applied;
}

/** The same command on every data node (one but on Cluster); their replies, joined. */
async function everyNode(on: NemesisTargets, command: string, ...args: string[]): Promise<string> {
  const replies = await Promise.all(
    on.topology.nodes().map((node) => node.call(command, ...args).catch(String)),
  );
  return replies.map(String).join(" ");
}

/** A topology's account of a fault, onto the fault applied. */
const record = (applied: AppliedFault, outcome: string | FaultOutcome): void => {
  Object.assign(applied, typeof outcome === "string" ? { note: outcome } : outcome);
};

/**
 * Before the primary is killed or replaced: its SLOWLOG is collected (it goes with it), then the
 * fault is stamped, when it strikes: the checker counts connection cuts from that time.
 */
async function collectThenStrike(applied: AppliedFault, on: NemesisTargets): Promise<void> {
  await on.beforeRedisKill().catch(() => undefined);
  applied.at = Date.now();
}

/** Applies one fault; a janitor or Redis it takes down comes back after holdMs. */
export async function applyFault(fault: PlannedFault, on: NemesisTargets): Promise<AppliedFault> {
  if (isJanitorFault(fault.kind)) return janitorFault(fault.kind, fault, on);
  const applied: AppliedFault = { ...fault, at: Date.now() };
  // Which stream's master a Cluster fault strikes: drawn from the seed with the rest.
  const pick = fault.holdMs;
  if (fault.kind === "kill-redis" && on.topology.restart !== undefined) {
    await collectThenStrike(applied, on);
    // Standalone has no other server: until it answers again, no janitor can sweep.
    const alone = on.topology.name === "standalone";
    if (alone) on.redisDown?.(true);
    try {
      record(applied, await on.topology.restart(Math.min(fault.holdMs, 1000), pick));
    } finally {
      if (alone) on.redisDown?.(false);
    }
  } else if (fault.kind === "failover" && on.topology.failover !== undefined) {
    await collectThenStrike(applied, on);
    record(applied, await on.topology.failover(pick));
  } else if (fault.kind === "migrate-slot" && on.topology.migrate !== undefined) {
    record(applied, await on.topology.migrate(pick));
  } else if (fault.kind === "client-kill") {
    applied.note = await everyNode(on, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes");
    applied.until = Date.now();
  } else if (fault.kind === "script-flush") {
    applied.note = await everyNode(on, "SCRIPT", "FLUSH");
  } else if (fault.kind === "dlq-redrive" || fault.kind === "dlq-purge") {
    applied.note = await on.operate(fault.kind === "dlq-redrive" ? "redrive" : "purge");
  } else {
    applied.note = await on.staleSweep();
  }
  return applied;
}

/** A failover not announced this long after its request was never done (the Sentinels gave up). */
const ANNOUNCE_BOUND_MS = 20_000;

/**
 * After the schedule: which faults happened. A failed one did not; a failover whose
 * `+switch-master` had not come when the schedule went on (topology.ts) happened if one came
 * within ANNOUNCE_BOUND_MS, before the next failover's request, and did not otherwise.
 */
export function settleFaults(faults: readonly AppliedFault[], switches: readonly number[]): void {
  const failovers = faults.filter((fault) => fault.kind === "failover");
  for (const fault of faults) {
    if (fault.note?.startsWith("failed:") === true) fault.happened = false;
    if (fault.kind !== "failover" || fault.note !== NOT_ANNOUNCED) continue;
    const next = failovers.find((other) => other.at > fault.at)?.at ?? Infinity;
    const until = Math.min(next, fault.at + ANNOUNCE_BOUND_MS);
    const announced = switches.find((at) => at > fault.at && at <= until);
    if (announced === undefined) {
      fault.happened = false;
      fault.note = `never announced within ${until - fault.at} ms: a failover that did not happen`;
    } else {
      fault.note = `announced ${announced - fault.at} ms after the request`;
    }
  }
}
