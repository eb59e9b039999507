import type { Redis } from "ioredis";
import { pino, type Logger } from "pino";
import type { DiscoverConfig, JanitorConfig } from "../../src/core/configTypes.js";
import { startDaemon, type RunningDaemon } from "../../src/daemon/startDaemon.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { testConfig } from "../support/testConfig.js";

/** A `discover` entry with the defaults of the schema and test-sized idle time. */
export function pattern(match: string, overrides: Partial<DiscoverConfig> = {}): DiscoverConfig {
  return {
    match,
    groups: "*",
    minIdleMs: 1000,
    maxDeliveries: 5,
    action: "requeue",
    requeueStream: "",
    deadLetterStream: "",
    deadLetterMaxLen: 100_000,
    ...overrides,
  };
}

/**
 * A configuration with patterns (and optionally listed groups). The discovery interval is an
 * hour: tests drive discovery with discoverOnce(), never with the timer.
 */
export function discoveryConfig(
  redisUrl: string,
  prefix: string,
  discover: DiscoverConfig[],
  extra: { groups?: JanitorConfig["groups"]; maxGroups?: number } = {},
): JanitorConfig {
  return {
    ...testConfig(redisUrl, prefix),
    groups: extra.groups ?? [],
    discover,
    discovery: { intervalMs: 3_600_000, maxGroups: extra.maxGroups ?? 10_000 },
  };
}

/** Log lines at warn and above, as objects. */
export function warnLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "warn" },
    { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { logger, lines };
}

export async function startInProcess(
  config: JanitorConfig,
  logger?: Logger,
): Promise<RunningDaemon> {
  const fatal: unknown[] = [];
  const daemon = await startDaemon(config, {
    logger: logger ?? pino({ level: "silent" }),
    version: "0.0.0-discovery",
    onFatal: (error) => fatal.push(error),
  });
  return daemon;
}

export async function stuck(redis: Redis, stream: string, group: string, count = 3): Promise<void> {
  await addStuckEntries(redis, stream, group, numberedBodies(count), { idleMs: 3_600_000 });
}

export async function pendingCount(redis: Redis, stream: string, group: string): Promise<number> {
  const [count] = (await redis.call("XPENDING", stream, group)) as [number];
  return count;
}

export async function metricsText(daemon: RunningDaemon): Promise<string> {
  return (await fetch(`${daemon.httpUrl}/metrics`)).text();
}

/** The value of one sample whose labels include `labels`, or undefined. */
export function sampleValue(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const wanted = Object.entries(labels).every(([key, value]) =>
      line.includes(`${key}="${value}"`),
    );
    if (wanted) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return undefined;
}
