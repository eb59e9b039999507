import {
  plainRedisConfig,
  type GroupConfig,
  type JanitorConfig,
} from "../../src/core/configTypes.js";

/** A full configuration with timings small enough for tests (the contract allows a few ms). */
export function testConfig(
  redisUrl: string,
  prefix: string,
  groups: Partial<GroupConfig>[] = [],
  overrides: Partial<Omit<JanitorConfig, "groups">> = {},
): JanitorConfig {
  return {
    redis: plainRedisConfig(redisUrl),
    http: { host: "127.0.0.1", port: 0 },
    log: { level: "info" },
    lease: { key: `${prefix}:lease`, ttlMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 },
    sweep: {
      intervalMs: 100,
      batchSize: 100,
      maxScriptMs: 2,
      maxEntriesPerGroup: 100_000,
      consumerName: "stream-janitor",
    },
    metrics: {
      perConsumer: false,
      maxConsumersPerGroup: 50,
      pelScanIntervalMs: 1000,
      scrapeTimeoutMs: 2000,
    },
    discover: [],
    discovery: { intervalMs: 60_000, maxGroups: 10_000 },
    retention: [],
    ...overrides,
    groups: groups.map((group) => ({
      stream: `${prefix}:stream`,
      group: "workers",
      minIdleMs: 1000,
      maxDeliveries: 5,
      action: "requeue",
      requeueStream: "",
      deadLetterStream: "",
      deadLetterMaxLen: 1_000_000,
      reapConsumersIdleMs: 0,
      ...group,
    })),
  };
}
