import { once } from "node:events";
import { createServer } from "node:net";
import { defaultConfig, plainRedisConfig } from "../config/defaultConfig.js";
import type { JanitorConfig } from "../core/configTypes.js";
import { defaultDeadLetterStream } from "../core/resolveGroup.js";

/**
 * Every key the demo touches starts with `demo:` (or `{demo:` for the dead-letter stream, whose
 * hash tag keeps it in the source's Cluster slot), so it can share a Redis with real data.
 */
export const DEMO_STREAM = "demo:orders";
export const DEMO_GROUP = "billing";
const DEMO_LEASE_KEY = "demo:stream-janitor:lease";
export const DEMO_DEAD_LETTER_STREAM = defaultDeadLetterStream(DEMO_STREAM);

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
    http: { host: "127.0.0.1", port: httpPort },
    lease: { key: DEMO_LEASE_KEY, ttlMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 },
    sweep: { ...defaults.sweep, intervalMs: 1000 },
    metrics: {
      ...defaults.metrics,
      perConsumer: true,
      maxConsumersPerGroup: 20,
      pelScanIntervalMs: 2000,
    },
    groups: [
      {
        stream: DEMO_STREAM,
        group: DEMO_GROUP,
        minIdleMs: DEMO_MIN_IDLE_MS,
        maxDeliveries: DEMO_MAX_DELIVERIES,
        action: "requeue",
        requeueStream: "",
        deadLetterStream: "",
        deadLetterMaxLen: 1000,
      },
    ],
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
