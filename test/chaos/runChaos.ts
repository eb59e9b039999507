import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { seededRandom } from "../support/seededRandom.js";
import type { Violation } from "./checker.js";
import { judge } from "./judge.js";
import { LocalHistory } from "./localHistory.js";
import { CHAOS_GROUPS, READ_PAIRS, SOURCE_STREAMS } from "./groups.js";
import { readHistory } from "./history.js";
import { applyFault, planFaults, settleFaults, type NemesisTargets } from "./nemesis.js";
import { probeFence } from "./fenceProbe.js";
import { ChaosProducer } from "./producer.js";
import { awaitQuiescence, lanesTrimmed } from "./quiescence.js";
import { viewsAgree } from "./agreement.js";
import { notReplaced, ScriptTime } from "./recovery.js";
import { PendingAuditor } from "./auditor.js";
import { buildReport, writeReport, type ChaosReport } from "./report.js";
import { sentinel, standalone, type TopologyName } from "./topology.js";
import { cluster } from "./clusterTopology.js";
import { healJanitors, type JanitorSet } from "./janitors.js";
import { lap, startParties, type Run } from "./runState.js";
import { operate } from "./operator.js";
import { SlowCommands } from "./slowlog.js";
import { harnessFailures } from "./slotCompletion.js";

export interface ChaosOptions {
  seed: number;
  durationMs: number;
  outDir: string;
  /** The CLI the janitors run: dist/cli.js, or a planted copy (self-test). */
  cli: string;
  maxBodyBytes: number;
  quietMs: number;
  topology: TopologyName;
  /**
   * The producer writes at least this many entries, past the schedule's active phase if the host
   * is too busy to write them sooner (the CI case: chaos.test.ts); 0 for none.
   */
  minEntries: number;
}

const PRODUCE_EVERY_MS = 40;

/** Faults that take a leader away when aimed at it. */
const LEADER_LOST: readonly string[] = ["kill-janitor", "stop-janitor", "partition"];

/** Every node's SLOWLOG and script time, before a server goes (they go with it) and at the end. */
async function collectFromNodes(run: Run): Promise<void> {
  for (const node of run.topology.nodes()) {
    await run.slow.collect(node).catch(() => undefined);
    await run.scriptTime.collect(node).catch(() => undefined);
  }
}

/** One stale leader's sweep per group; what went wrong is kept for the checker. */
async function staleSweeps(run: Run, options: ChaosOptions): Promise<string> {
  const found: Violation[] = [];
  const cluster = run.topology.name === "cluster";
  const connect = () => run.topology.connect();
  for (const group of CHAOS_GROUPS)
    found.push(...(await probeFence(options.cli, connect, group, cluster)));
  run.fenceViolations.push(...found);
  return found.length === 0 ? "refused (FENCED)" : found.map((v) => v.detail).join("; ");
}

async function runNemesis(
  run: Run,
  options: ChaosOptions,
  random: () => number,
  untilMs: number,
): Promise<void> {
  const started = Date.now();
  const set = run.set;
  if (set === undefined) return;
  const operatorRandom = seededRandom(options.seed ^ 0x0be7a7);
  const operator = {
    redis: run.admin,
    cli: options.cli,
    config: set.operatorConfig,
    local: run.local,
  };
  const targets: NemesisTargets = {
    topology: run.topology,
    janitors: set.janitors,
    links: set.links,
    reconfigure: (index) => set.reconfigure(index),
    operate: (kind) => operate(kind, operatorRandom, operator),
    beforeRedisKill: () => collectFromNodes(run),
    staleSweep: () => staleSweeps(run, options),
    redisDown: (down) => run.recovery?.redisDown(down),
  };
  for (const fault of planFaults(random, untilMs, set.janitors.length, run.topology)) {
    const wait = started + fault.atMs - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const applied = await applyFault(fault, targets).catch((error: unknown) => ({
      ...fault,
      at: Date.now(),
      victim: undefined,
      note: `failed: ${String(error)}`,
    }));
    run.faults.push(applied);
    if (fault.target === -1 && applied.victim !== undefined && LEADER_LOST.includes(fault.kind)) {
      run.recovery?.leaderLost(fault.kind, applied.at);
    }
  }
}

async function schedule(run: Run, options: ChaosOptions, random: () => number): Promise<void> {
  const activeMs = Math.round(options.durationMs * 0.75);
  // Its own connection: each write is followed by WAIT (Sentinel, Cluster), which holds it.
  const connection = run.topology.connect();
  const producer = new ChaosProducer(
    connection,
    seededRandom(options.seed ^ 0x5eed),
    options.maxBodyBytes,
    run.local,
  );
  const started = Date.now();
  const producing = producer.run(SOURCE_STREAMS, PRODUCE_EVERY_MS, options.minEntries);
  await runNemesis(run, options, random, activeMs);
  const left = activeMs - (Date.now() - started);
  if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
  producer.stop();
  await producing;
  connection.disconnect();
  if (run.set !== undefined) healJanitors(run.set);
}

/** At quiescence: each janitor's /metrics and /status.json, and inspect --json, agree with Redis. */
function agreeWithRedis(run: Run, set: JanitorSet, options: ChaosOptions): Promise<Violation[]> {
  const views = {
    redis: run.admin,
    janitors: set.janitors,
    cli: options.cli,
    operatorConfig: set.operatorConfig,
    redisRestarted: run.faults.some((f) => f.kind === "kill-redis" || f.kind === "failover"),
  };
  return viewsAgree(views, 20_000);
}

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  await mkdir(options.outDir, { recursive: true });
  const random = seededRandom(options.seed);
  const dataDir = await mkdtemp(join(tmpdir(), "sj-chaos-"));
  const topology =
    options.topology === "sentinel"
      ? await sentinel()
      : options.topology === "cluster"
        ? await cluster()
        : await standalone(dataDir);
  const admin = topology.connect();
  const run: Run = {
    topology,
    admin,
    set: undefined,
    consumers: [],
    programs: [],
    slow: new SlowCommands(),
    faults: [],
    fenceViolations: [],
    auditor: new PendingAuditor(admin, READ_PAIRS),
    recovery: undefined,
    scriptTime: new ScriptTime(),
    local: await LocalHistory.create(options.outDir, options.topology !== "standalone"),
    phasesMs: {},
    lapStarted: Date.now(),
  };
  try {
    const set = await startParties(run, options, random);
    lap(run, "start");
    run.auditor.start();
    await schedule(run, options, random);
    lap(run, "schedule");
    const quiet = Math.max(options.quietMs, options.durationMs - (run.phasesMs.schedule ?? 0));
    const extra: Violation[] = await awaitQuiescence(admin, () => topology.nodes(), quiet);
    lap(run, "quiet");
    await run.auditor.stop();
    extra.push(...run.auditor.violations);
    if (extra.length === 0) extra.push(...(await agreeWithRedis(run, set, options)));
    // Only once everything settled: while copies wait, a lane is not empty for a good reason.
    if (extra.length === 0) extra.push(...(await lanesTrimmed(admin, 10_000)));
    await collectFromNodes(run);
    extra.push(...run.slow.violations());
    await staleSweeps(run, options);
    extra.push(...run.fenceViolations);
    lap(run, "checks");
    // Their local logs complete before the checker reads them.
    await Promise.all(run.consumers.map((consumer) => consumer.stop()));
    return await finish(run, options, extra);
  } finally {
    await Promise.all(run.consumers.map((consumer) => consumer.stop()));
    await Promise.all(run.programs.map((program) => program.remove()));
    await run.set?.close();
    admin.disconnect();
    await topology.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function finish(run: Run, options: ChaosOptions, extra: Violation[]): Promise<ChaosReport> {
  const history = await readHistory(run.admin);
  const switches = run.topology.switches;
  settleFaults(run.faults, switches ?? []);
  const local = await run.local.all();
  const verdict = judge({
    topology: options.topology,
    history,
    local,
    faults: run.faults,
    switches,
    unrequested: run.topology.clusterFailovers?.filter((f) => f.cause === "self"),
  });
  const units = verdict.counts.toProcess ?? 0;
  verdict.counts.janitorScriptUsPerEntry = Math.round(run.scriptTime.usec / Math.max(1, units));
  verdict.counts.janitorScriptCalls = run.scriptTime.calls;
  for (const [stream, length] of Object.entries(run.auditor.longest)) {
    verdict.counts[`longest ${stream}`] = length;
  }
  verdict.violations.push(...extra, ...harnessFailures(run.faults));
  const consumers = run.consumers.map(({ name, behaviour, starts, crashes }) => ({
    name,
    behaviour,
    starts,
    crashes,
  }));
  const base = {
    seed: options.seed,
    topology: options.topology,
    durationMs: options.durationMs,
    cli: options.cli,
    consumers,
    slowCommands: run.slow.all,
    switches: [...(switches ?? [])],
    clusterFailovers: [...(run.topology.clusterFailovers ?? [])],
    clusterDown: [...(run.topology.clusterDown ?? [])],
    recoveries: (await run.recovery?.settled()) ?? [],
    phasesMs: run.phasesMs,
  };
  verdict.violations.push(...notReplaced(base.recoveries));
  const stderr = run.consumers.map((c) => `== ${c.name} (${c.behaviour})\n${c.stderr}`).join("\n");
  await writeFile(join(options.outDir, "consumers.log"), stderr);
  const report = buildReport(base, verdict, history, run.faults);
  await writeReport(options.outDir, report, history, run.faults, run.local.records);
  return report;
}
