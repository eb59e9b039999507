import type { Redis } from "ioredis";
import { Registry } from "prom-client";
import { defaultConfig } from "../../src/config/defaultConfig.js";
import type { JanitorConfig } from "../../src/core/configTypes.js";
import {
  createScrapeRefresher,
  type ScrapeRefresher,
} from "../../src/scrape/createScrapeRefresher.js";
import { createJanitorMetrics, type JanitorMetrics } from "../../src/metrics/janitorMetrics.js";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { captureLogger } from "../support/sweepHarness.js";
import { testConfig } from "../support/testConfig.js";

/** testConfig() with these groups: only the metrics section matters to the refresher. */
export function janitorConfig(
  redisUrl: string,
  groups: readonly ResolvedGroup[],
  metrics: Partial<JanitorConfig["metrics"]> = {},
): JanitorConfig {
  return {
    ...testConfig(redisUrl, "stream-janitor", [], {
      log: { level: "silent" },
      metrics: { ...defaultConfig().metrics, scrapeTimeoutMs: 1000, ...metrics },
    }),
    groups: groups.map((group) => ({
      stream: group.stream,
      group: group.group,
      minIdleMs: group.minIdleMs,
      maxDeliveries: group.maxDeliveries,
      action: group.action,
      requeueStream: group.requeueStream,
      deadLetterStream: group.deadLetterStream,
      deadLetterMaxLen: group.deadLetterMaxLen,
    })),
  };
}

export interface TestRefresher {
  refresher: ScrapeRefresher;
  metrics: JanitorMetrics;
  registry: Registry;
  logLines: Record<string, unknown>[];
}

/** A refresher on its own registry (no default metrics), logging into an array. */
export function createTestRefresher(
  redis: Redis,
  groups: readonly ResolvedGroup[],
  metrics: Partial<JanitorConfig["metrics"]> = {},
): TestRefresher {
  const registry = new Registry();
  const janitorMetrics = createJanitorMetrics(registry, "0.0.0-test");
  const { logger, lines } = captureLogger();
  const refresher = createScrapeRefresher({
    redis,
    groups,
    metrics: janitorMetrics,
    logger,
    config: janitorConfig("redis://unused", groups, metrics),
  });
  return { refresher, metrics: janitorMetrics, registry, logLines: lines };
}

export interface Sample {
  labels: Record<string, string | number>;
  value: number;
}

/** A gauge or a counter: anything prom-client can read samples from. */
export interface Readable {
  get(): Promise<{ values: { labels: object; value: number }[] }>;
}

export async function gaugeSamples(gauge: Readable): Promise<Sample[]> {
  return (await gauge.get()).values.map(({ labels, value }) => ({
    labels: labels as Record<string, string | number>,
    value,
  }));
}

/** The value of the sample whose labels include these, or undefined when there is none. */
export async function gaugeValue(
  gauge: Readable,
  labels: Record<string, string>,
): Promise<number | undefined> {
  const samples = await gaugeSamples(gauge);
  const match = samples.find((sample) =>
    Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
  return match?.value;
}

/** Redis TIME in ms, the clock ids and ages are measured on. */
export async function redisNowMs(redis: Redis): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}
