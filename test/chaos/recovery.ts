import type { Redis } from "ioredis";
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
}

/**
 * Leader lost -> next sweep: after a fault that takes the leader away (kill, stop, partition),
 * how long until some janitor finishes a sweep (its last_sweep_success_timestamp_seconds passes
 * the fault's time). Polled every 250 ms, so a figure may be up to that much late.
 */
export class RecoveryWatch {
  readonly recoveries: Recovery[] = [];
  private readonly watching: Promise<void>[] = [];

  constructor(private readonly janitors: readonly JanitorReplica[]) {}

  leaderLost(kind: string, at: number): void {
    const recovery: Recovery = { kind, at, recoveredMs: null };
    this.recoveries.push(recovery);
    const swept = async () => {
      for (const janitor of this.janitors) {
        const latest = await latestSweepMs(janitor);
        if (latest > at) {
          recovery.recoveredMs = Math.round(latest - at);
          return true;
        }
      }
      return false;
    };
    this.watching.push(pollUntil(swept, 30_000).then(() => undefined));
  }

  async settled(): Promise<Recovery[]> {
    await Promise.all(this.watching);
    return this.recoveries;
  }
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
