import type { Redis } from "ioredis";
import { waitFor } from "../support/waitFor.js";
import { startRedis } from "../support/redisServer.js";
import {
  daemonConfig,
  httpGet,
  isLeader,
  startDaemonChild,
  type DaemonChild,
} from "./daemonProcess.js";
import { LEASE_KEY } from "./janitorSweep.js";
import type { BenchOptions, ScenarioResult } from "./scenario.js";
import { max, median } from "./stats.js";
import { fmt, type Table, type TargetCheck } from "./table.js";

interface Timings {
  ttlMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}
const FAST: Timings = { ttlMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 };
const DEFAULTS: Timings = { ttlMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2000 };
type Stop = "SIGKILL" | "SIGTERM";

interface TakeoverRun {
  timings: string;
  stop: Stop;
  /** From the signal to the lease key naming the standby. */
  keyMs: number;
  /** From the signal to the standby's /metrics saying stream_janitor_leader 1. */
  gaugeMs: number;
  /** From the signal to the old leader's exit. */
  exitMs: number;
}

/** The pid inside a lease value `host/pid/random`. */
function holderPid(value: string | null): number | undefined {
  const pid = value?.split("/")[1];
  return pid === undefined ? undefined : Number(pid);
}

async function start(options: BenchOptions, url: string, timings: Timings): Promise<DaemonChild> {
  const child = await startDaemonChild(
    options.cliPath,
    // run refuses a configuration with nothing to do: one group, whose stream need not exist.
    daemonConfig(url, {
      log: { level: "info" },
      lease: timings,
      groups: [{ stream: "lease-bench", group: "idle" }],
    }),
  );
  await waitFor(async () => (await httpGet(`${child.httpUrl}/readyz`)).status === 200, {
    timeoutMs: 20_000,
    what: "the daemon to be ready",
  });
  return child;
}

/** Signals the leader and measures until the standby holds the key and says so. */
async function takeOver(
  redis: Redis,
  leader: DaemonChild,
  standby: DaemonChild,
  stop: Stop,
  timings: Timings,
): Promise<Omit<TakeoverRun, "timings" | "stop">> {
  let exitMs = Number.NaN;
  const t0 = performance.now();
  leader.kill(stop);
  void leader.exited.then(() => {
    exitMs = performance.now() - t0;
  });
  let keyMs = Number.NaN;
  let gaugeMs = Number.NaN;
  await waitFor(
    async () => {
      const [value, leads] = await Promise.all([
        Number.isNaN(keyMs) ? redis.get(LEASE_KEY) : Promise.resolve(null),
        Number.isNaN(gaugeMs) ? isLeader(standby) : Promise.resolve(false),
      ]);
      const now = performance.now() - t0;
      if (Number.isNaN(keyMs) && holderPid(value) === standby.pid) keyMs = now;
      if (Number.isNaN(gaugeMs) && leads) gaugeMs = now;
      return !Number.isNaN(keyMs) && !Number.isNaN(gaugeMs);
    },
    { timeoutMs: timings.ttlMs * 4 + 10_000, what: "the standby to take over", intervalMs: 10 },
  );
  await leader.exited;
  await leader.stop();
  return { keyMs, gaugeMs, exitMs };
}

async function series(
  options: BenchOptions,
  redis: Redis,
  url: string,
  timings: Timings,
  label: string,
  runsPerStop: number,
): Promise<TakeoverRun[]> {
  const runs: TakeoverRun[] = [];
  let leader = await start(options, url, timings);
  await waitFor(
    async () => holderPid(await redis.get(LEASE_KEY)) === leader.pid && (await isLeader(leader)),
    { timeoutMs: timings.ttlMs * 4 + 10_000, what: "the first daemon to lead" },
  );
  let standby = await start(options, url, timings);
  try {
    for (const stop of ["SIGKILL", "SIGTERM"] as const) {
      for (let i = 0; i < runsPerStop; i += 1) {
        // The standby has run at least one acquire attempt (and failed) before the leader goes.
        await new Promise((resolve) => setTimeout(resolve, timings.retryPeriodMs * 1.5));
        const measured = await takeOver(redis, leader, standby, stop, timings);
        runs.push({ timings: label, stop, ...measured });
        options.log(
          `  ${label} ${stop}: key ${fmt(measured.keyMs, 0)} ms, gauge ${fmt(measured.gaugeMs, 0)} ms`,
        );
        leader = standby;
        standby = await start(options, url, timings);
      }
    }
  } finally {
    await Promise.all([leader.stop(), standby.stop()]);
  }
  return runs;
}

export async function leaseScenario(options: BenchOptions): Promise<ScenarioResult> {
  const server = await startRedis();
  const redis = server.client();
  const runs: TakeoverRun[] = [];
  try {
    const fastLabel = `${FAST.ttlMs}/${FAST.renewDeadlineMs}/${FAST.retryPeriodMs}`;
    runs.push(
      ...(await series(options, redis, server.url, FAST, fastLabel, options.quick ? 3 : 10)),
    );
    if (!options.quick) {
      await redis.del(LEASE_KEY);
      const label = `${DEFAULTS.ttlMs}/${DEFAULTS.renewDeadlineMs}/${DEFAULTS.retryPeriodMs} (defaults)`;
      runs.push(...(await series(options, redis, server.url, DEFAULTS, label, 1)));
    }
  } finally {
    await server.stop();
  }
  const groups = new Map<string, TakeoverRun[]>();
  for (const run of runs) {
    const key = `${run.timings}|${run.stop}`;
    groups.set(key, [...(groups.get(key) ?? []), run]);
  }
  const rows: (string | number)[][] = [];
  const targets: TargetCheck[] = [];
  for (const [key, list] of groups) {
    const [timings = "", stop = ""] = key.split("|");
    const keyTimes = list.map((run) => run.keyMs);
    const gaugeTimes = list.map((run) => run.gaugeMs);
    rows.push([
      timings,
      stop === "SIGKILL" ? "kill -9" : "SIGTERM",
      list.length,
      fmt(median(keyTimes), 0),
      fmt(max(keyTimes), 0),
      fmt(median(gaugeTimes), 0),
      fmt(max(gaugeTimes), 0),
      fmt(median(list.map((run) => run.exitMs)), 0),
    ]);
  }
  const fast = runs.filter((run) => run.timings.startsWith(`${FAST.ttlMs}/`));
  const killWorst = max(fast.filter((run) => run.stop === "SIGKILL").map((run) => run.gaugeMs));
  const termWorst = max(fast.filter((run) => run.stop === "SIGTERM").map((run) => run.gaugeMs));
  // Bounds that follow from the timings: a crashed leader's key expires within ttl, the standby
  // tries every retryPeriod (+20 % jitter); a graceful stop releases the key at once.
  const killBound = FAST.ttlMs + FAST.retryPeriodMs * 1.2 + 100;
  const termBound = FAST.retryPeriodMs * 1.2 + 100;
  targets.push(
    {
      scenario: "5 take-over after kill -9 (1500/1000/200), worst",
      target: `<= ttl + 1.2 retry + 100 ms = ${killBound} ms`,
      measured: `${fmt(killWorst, 0)} ms`,
      met: killWorst <= killBound,
    },
    {
      scenario: "5 take-over after SIGTERM (1500/1000/200), worst",
      target: `<= 1.2 retry + 100 ms = ${termBound} ms`,
      measured: `${fmt(termWorst, 0)} ms`,
      met: termWorst <= termBound,
    },
  );
  const table: Table = {
    title: "5. Lease take-over (two daemon child processes, one Redis)",
    columns: [
      "ttl/deadline/retry ms",
      "leader stopped by",
      "runs",
      "key median ms",
      "key worst ms",
      "gauge median ms",
      "gauge worst ms",
      "old leader exit ms",
    ],
    rows,
    notes: [
      "Time from the signal to the lease key naming the standby's pid (key) and to the standby's /metrics showing stream_janitor_leader 1 (gauge); both polled every 10 ms.",
      "The bounds in the targets table are not from the issue: they are what the timings promise (key expiry + one jittered retry period).",
    ],
  };
  return { name: "lease", tables: [table], targets, raw: { runs } };
}
