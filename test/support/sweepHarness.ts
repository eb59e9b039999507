import type { Cluster, Redis } from "ioredis";
import { pino, type Logger } from "pino";
import type { GroupConfig } from "../../src/core/configTypes.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { resolveGroup, type ResolvedGroup } from "../../src/core/resolveGroup.js";
import type { Fence } from "../../src/core/fence.js";
import type { SweepContext } from "../../src/sweep/sweepOnce.js";

export function groupConfig(stream: string, overrides: Partial<GroupConfig> = {}): ResolvedGroup {
  return resolveGroup({
    stream,
    group: "workers",
    minIdleMs: 1000,
    maxDeliveries: 5,
    action: "requeue",
    requeueStream: "",
    deadLetterStream: "",
    deadLetterMaxLen: 100_000,
    ...overrides,
  });
}

/** Log lines captured as objects, so tests can assert on what was logged. */
export function captureLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "debug" },
    {
      write(line: string) {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  );
  return { logger, lines };
}

export function sweepContext(
  redis: Redis | Cluster,
  overrides: Partial<Omit<SweepContext, "fence">> & { fence?: Fence } = {},
): SweepContext {
  const { fence, ...rest } = overrides;
  return {
    redis: registerScripts(redis),
    logger: pino({ level: "silent" }),
    batchSize: 100,
    maxScriptMs: 2,
    maxEntriesPerGroup: 100_000,
    janitorConsumer: JANITOR_CONSUMER,
    cursors: new Map(),
    now: () => performance.now(),
    ...rest,
    fence: () => fence,
  };
}

/** The default of sweep.consumerName. */
export const JANITOR_CONSUMER = "stream-janitor";

export const neverAborted = new AbortController().signal;
