import {
  defaultConfig,
  defaultGroupConfig,
  plainRedisConfig,
} from "../../src/config/defaultConfig.js";
import type { GroupConfig, JanitorConfig } from "../../src/core/configTypes.js";

/**
 * The shared test configuration: the product's defaults (defaultConfig) with timings small
 * enough for tests (the contract allows a few ms), HTTP on a free loopback port, keys under
 * `prefix`. Each group defaults to `${prefix}:stream`/workers, idle after 1 s.
 */
export function testConfig(
  redisUrl: string,
  prefix: string,
  groups: Partial<GroupConfig>[] = [],
  overrides: Partial<Omit<JanitorConfig, "groups">> = {},
): JanitorConfig {
  const defaults = defaultConfig();
  return {
    ...defaults,
    redis: plainRedisConfig(redisUrl),
    http: { ...defaults.http, host: "127.0.0.1", port: 0 },
    lease: { key: `${prefix}:lease`, ttlMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 },
    sweep: { ...defaults.sweep, intervalMs: 100, batchSize: 100 },
    // A scrape waits for the read it caused, as long as the read may take: an assertion on one
    // scrape sees that read on a loaded machine too. The late path (answered with the last
    // complete read) has tests of its own (test/metrics/lateScrapeRead.test.ts).
    metrics: {
      ...defaults.metrics,
      pelScanIntervalMs: 1000,
      scrapeReadWaitMs: defaults.metrics.scrapeTimeoutMs,
    },
    // The test's own events stream: tests on one server never see each other's events.
    events: { ...defaults.events, stream: `${prefix}:events` },
    ...overrides,
    groups: groups.map((group) => ({
      ...defaultGroupConfig(`${prefix}:stream`, "workers"),
      minIdleMs: 1000,
      deadLetterMaxLen: 1_000_000,
      ...group,
    })),
  };
}
