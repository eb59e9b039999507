import { Registry } from "prom-client";
import type { JanitorConfig } from "../../src/core/configTypes.js";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import type { AdvisoryEvent } from "../../src/events/EventWriter.js";
import type { RedisClient } from "../../src/redis/RedisClient.js";
import { createStatusMetrics } from "../../src/metrics/statusMetrics.js";
import type { PelScanResult } from "../../src/scrape/scanGroupPel.js";
import { StatusSampler, type StatusSamplerOptions } from "../../src/status/StatusSampler.js";
import { captureLogger } from "../support/sweepHarness.js";
import { testConfig } from "../support/testConfig.js";

export interface TestSampler {
  sampler: StatusSampler;
  registry: Registry;
  lines: Record<string, unknown>[];
  events: AdvisoryEvent[];
  /** Whether the sampler believes it leads (events are written only then). */
  leader: { value: boolean };
  pelScans: Map<string, PelScanResult>;
}

/** A sampler on its own registry, logging into an array, with events captured. */
export function createTestSampler(
  redis: RedisClient,
  groups: readonly ResolvedGroup[],
  status: Partial<JanitorConfig["status"]> = {},
  extra: Pick<Partial<StatusSamplerOptions>, "timers" | "random"> = {},
): TestSampler {
  const defaults = testConfig("redis://unused", "unused");
  const config = { ...defaults, status: { ...defaults.status, ...status } };
  const registry = new Registry();
  const { logger, lines } = captureLogger();
  const events: AdvisoryEvent[] = [];
  const leader = { value: true };
  const pelScans = new Map<string, PelScanResult>();
  const sampler = new StatusSampler({
    redis,
    groups,
    config,
    metrics: createStatusMetrics(registry),
    pelScans,
    logger,
    instance: "test-host:1",
    isLeader: () => leader.value,
    fencingToken: () => (leader.value ? 7 : null),
    writeEvent: (event) => events.push(event),
    ...extra,
  });
  return { sampler, registry, lines, events, leader, pelScans };
}

/** The values of stream_janitor_group_status for one group, by status. */
export async function statusSeries(
  registry: Registry,
  stream: string,
  group = "workers",
): Promise<Record<string, number>> {
  const text = await registry.metrics();
  const series: Record<string, number> = {};
  const prefix = `stream_janitor_group_status{stream="${stream}",group="${group}",status="`;
  for (const line of text.split("\n")) {
    if (!line.startsWith(prefix)) continue;
    const [labels, value] = line.slice(prefix.length).split(" ");
    series[(labels ?? "").replace(/"\}$/u, "")] = Number(value);
  }
  return series;
}
