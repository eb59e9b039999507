import { pino } from "pino";
import { createRedisClient } from "../../src/redis/createRedisClient.js";
import { registerScripts, type ScriptedRedis } from "../../src/scripts/scriptedRedis.js";
import type { GroupSweepResult } from "../../src/sweep/GroupSweepResult.js";
import { resolveGroup, type ResolvedGroup } from "../../src/core/resolveGroup.js";
import type { Fence } from "../../src/core/fence.js";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import type { SweepPath } from "./naiveLoop.js";

export const JANITOR_CONSUMER = "stream-janitor";
/** The configuration defaults (contract section 3). */
const DEFAULT_SWEEP = { batchSize: 1000, maxScriptMs: 2 };
export const LEASE_KEY = "stream-janitor:lease";
export const BENCH_FENCE: Fence = { key: LEASE_KEY, value: "bench-host/1/0123456789abcdef" };

/** The group as the daemon would resolve it from its configuration. */
export function benchGroup(stream: string, group: string, path: SweepPath): ResolvedGroup {
  return resolveGroup({
    stream,
    group,
    minIdleMs: 60_000,
    maxDeliveries: 5,
    action: path,
    requeueStream: "",
    deadLetterStream: "",
    deadLetterMaxLen: 100_000,
  });
}

/** A connection made exactly as the daemon makes its sweep connection. */
export async function janitorConnection(url: string): Promise<ScriptedRedis> {
  const client = createRedisClient({
    url,
    password: "",
    connectionName: "stream-janitor:sweep",
    commandTimeoutMs: 60_000,
    logger: pino({ level: "silent" }),
  });
  await client.connect();
  return registerScripts(client);
}

/**
 * One full sweep of one group through the production code path (sweepOnce: adaptive calls of the
 * production sweepPage script, fenced by the lease key, which the caller must have set to
 * BENCH_FENCE.value). Settings default to the configuration's defaults.
 */
export async function janitorSweep(
  redis: ScriptedRedis,
  group: ResolvedGroup,
  settings: { batchSize: number; maxScriptMs: number } = DEFAULT_SWEEP,
): Promise<GroupSweepResult> {
  const result = await sweepOnce(
    group,
    {
      redis,
      logger: pino({ level: "silent" }),
      ...settings,
      janitorConsumer: JANITOR_CONSUMER,
      maxEntriesPerGroup: Number.MAX_SAFE_INTEGER,
      cursors: new Map(),
      fence: () => BENCH_FENCE,
      now: () => performance.now(),
    },
    new AbortController().signal,
  );
  if (result.error !== undefined) throw new Error(`janitor sweep failed: ${result.error}`);
  return result;
}
