import { once } from "node:events";
import { createServer } from "node:net";
import { defaultConfig, plainRedisConfig } from "../config/defaultConfig.js";
import type { JanitorConfig } from "../core/configTypes.js";
import { defaultDeadLetterStream, defaultRetryLaneStream } from "../core/resolveGroup.js";

/**
 * Every key the demo touches starts with `demo:` (or `{demo:` for the dead-letter stream, whose
 * hash tag keeps it in the source's Cluster slot), so it can share a Redis with real data.
 */
export const DEMO_STREAM = "demo:orders";
export const DEMO_GROUP = "billing";
/** The stream's second group: it records every order, so a copy in demo:orders would reach it. */
export const DEMO_AUDIT_GROUP = "audit";
const DEMO_LEASE_KEY = "demo:stream-janitor:lease";
export const DEMO_DEAD_LETTER_STREAM = defaultDeadLetterStream(DEMO_STREAM);
/**
 * Two groups read demo:orders, so neither may requeue into it (the other would get the copy):
 * each requeues into a retry lane of its own (retryLane: true), which its consumers read too.
 */
export const DEMO_BILLING_LANE = defaultRetryLaneStream(DEMO_STREAM, DEMO_GROUP);
export const DEMO_AUDIT_LANE = defaultRetryLaneStream(DEMO_STREAM, DEMO_AUDIT_GROUP);
/** Each group's lane, by group name (the janitor's log lines name the group only). */
export const DEMO_LANES: Readonly<Record<string, string>> = {
  [DEMO_GROUP]: DEMO_BILLING_LANE,
  [DEMO_AUDIT_GROUP]: DEMO_AUDIT_LANE,
};

export const DEMO_MIN_IDLE_MS = 2000;
export const DEMO_MAX_DELIVERIES = 3;

/** http.port's default. */
const PREFERRED_HTTP_PORT = defaultConfig().http.port;

/**
 * The daemon's configuration: the defaults, with timings shrunk from minutes to seconds so the
 * whole story plays out in about ten seconds. The lease rule ttl > deadline > 1.2 * period holds.
 */
export function demoConfig(redisUrl: string, httpPort: number): JanitorConfig {
  const defaults = defaultConfig();
  return {
    ...defaults,
    redis: plainRedisConfig(redisUrl),
    // Loopback only: the demo has no business exposing a port to the network.
    http: { ...defaults.http, host: "127.0.0.1", port: httpPort },
    lease: { key: DEMO_LEASE_KEY, ttlMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 },
    sweep: { ...defaults.sweep, intervalMs: 1000 },
    metrics: {
      ...defaults.metrics,
      perConsumer: true,
      maxConsumersPerGroup: 20,
      pelScanIntervalMs: 2000,
      // The digest shows what the janitor did by the end: each scrape waits for its own read
      // (README "How gauges are read"), never the page written ahead at start-up, whose counters
      // were all 0 (a loaded host's late read served it to the final digest).
      scrapeReadWaitMs: defaults.metrics.scrapeTimeoutMs,
    },
    groups: [DEMO_GROUP, DEMO_AUDIT_GROUP].map((group) => ({
      stream: DEMO_STREAM,
      group,
      minIdleMs: DEMO_MIN_IDLE_MS,
      maxDeliveries: DEMO_MAX_DELIVERIES,
      action: "requeue" as const,
      retryLane: true,
      requeueStream: "",
      deadLetterStream: "",
      deadLetterMaxLen: 1000,
    })),
  };
}

/** The daemon's usual port when nothing holds it, so the printed curl line is the familiar one. */
export async function chooseHttpPort(): Promise<number> {
  const probe = createServer();
  try {
    probe.listen(PREFERRED_HTTP_PORT, "127.0.0.1");
    await once(probe, "listening");
  } catch {
    return 0; // taken: let the kernel pick a free one
  }
  probe.close();
  await once(probe, "close");
  return PREFERRED_HTTP_PORT;
}
