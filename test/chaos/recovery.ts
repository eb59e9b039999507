import type { Redis } from "ioredis";
import type { Violation } from "./checker.js";
import { DownSpans, type DownSpan } from "./downSpans.js";
import { pollUntil } from "./quiescence.js";
import type { JanitorReplica } from "./servers.js";

const SWEPT = "stream_janitor_last_sweep_success_timestamp_seconds";

/** The latest sweep any of its groups finished, by one janitor's /metrics (ms; 0: none). */
async function latestSweepMs(janitor: JanitorReplica): Promise<number> {
  const text = (await janitor.get("/metrics")) ?? "";
  let latest = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${SWEPT}{`)) continue;
    latest = Math.max(latest, Number(line.slice(line.lastIndexOf(" ") + 1)) * 1000);
  }
  return latest;
}

export interface Recovery {
  kind: string;
  at: number;
  /** Fault to the first sweep finished after it (by the janitors' clock, read every 250 ms). */
  recoveredMs: number | null;
  /** How much of that (or of the wait, if none came) Redis was down: not the janitor's time. */
  redisDownMs: number;
}

/** The bound on a recovery, Redis's downtime meanwhile not counted. */
export const RECOVERY_BOUND_MS = 30_000;

/** How long Redis was down between `from` and `to`. */
export function downWithin(spans: readonly DownSpan[], from: number, to: number): number {
  let total = 0;
  for (const span of spans) {
    const start = Math.max(from, span.down);
    const end = Math.min(to, span.up ?? to);
    if (end > start) total += end - start;
  }
  return total;
}

/**
 * The janitors' part of a recovery from `at` to `now`: the time passed less the time Redis was
 * down (no janitor can sweep a Redis that does not answer; an AOF replay took 40 s on a loaded
 * host). The bound counts from when Redis answers again.
 */
export function janitorTime(spans: readonly DownSpan[], at: number, now: number): number {
  return now - at - downWithin(spans, at, now);
}

/**
 * Leader lost -> next sweep: after a fault that takes the leader away (kill, stop, partition),
 * how long until some janitor finishes a sweep (its last_sweep_success_timestamp_seconds passes
 * the fault's time), waiting up to RECOVERY_BOUND_MS of janitor time (janitorTime). Polled every
 * 250 ms, so a figure may be up to that much late.
 */
export class RecoveryWatch {
  readonly recoveries: Recovery[] = [];
  private readonly watching: Promise<void>[] = [];
  private readonly down = new DownSpans();

  constructor(private readonly janitors: readonly JanitorReplica[]) {}

  /** Redis went down (true) or answers again (false). */
  redisDown(down: boolean, at = Date.now()): void {
    this.down.observe(down, at);
  }

  leaderLost(kind: string, at: number): void {
    const recovery: Recovery = { kind, at, recoveredMs: null, redisDownMs: 0 };
    this.recoveries.push(recovery);
    const swept = async () => {
      for (const janitor of this.janitors) {
        const latest = await latestSweepMs(janitor);
        if (latest > at) {
          recovery.recoveredMs = Math.round(latest - at);
          recovery.redisDownMs = Math.round(downWithin(this.down.spans, at, latest));
          return true;
        }
      }
      recovery.redisDownMs = Math.round(downWithin(this.down.spans, at, Date.now()));
      return false;
    };
    const waited = () => janitorTime(this.down.spans, at, Date.now()) > RECOVERY_BOUND_MS;
    this.watching.push(pollUntil(swept, Infinity, waited).then(() => undefined));
  }

  async settled(): Promise<Recovery[]> {
    await Promise.all(this.watching);
    return this.recoveries;
  }
}

/** A `leader-not-replaced` violation for each recovery that did not come within the bound. */
export function notReplaced(recoveries: readonly Recovery[]): Violation[] {
  return recoveries
    .filter((recovery) => recovery.recoveredMs === null)
    .map((lost) => {
      const down =
        lost.redisDownMs > 0 ? ` (Redis down ${lost.redisDownMs} ms meanwhile, not counted)` : "";
      const detail = `${lost.kind} of the leader at ${lost.at}: no sweep finished within 30 s${down}`;
      return { invariant: "leader-not-replaced", detail };
    });
}

/**
 * Redis time spent in the janitor's scripts (EVALSHA: the harness's own scripts go by EVAL),
 * from INFO commandstats, added up across servers and restarts: the latest figures of each server
 * process (its run_id) count once. Collect from every node before each kill and at the end.
 */
export class ScriptTime {
  private readonly byServer = new Map<string, { calls: number; usec: number }>();

  get usec(): number {
    return [...this.byServer.values()].reduce((sum, figures) => sum + figures.usec, 0);
  }

  get calls(): number {
    return [...this.byServer.values()].reduce((sum, figures) => sum + figures.calls, 0);
  }

  async collect(redis: Redis): Promise<void> {
    const info = String(await redis.call("INFO", "server", "commandstats"));
    const server = /run_id:(\w+)/u.exec(info)?.[1] ?? "";
    const match = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/u.exec(info);
    if (match === null) return;
    this.byServer.set(server, { calls: Number(match[1]), usec: Number(match[2]) });
  }
}
