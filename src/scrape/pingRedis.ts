import type { JanitorConfig } from "../core/configTypes.js";
import type { JanitorMetrics } from "../metrics/janitorMetrics.js";
import { runPipeline } from "../redis/pipeline/runPipeline.js";
import type { RedisClient } from "../redis/RedisClient.js";

/** Readiness probes commonly time out after a second. */
const MAX_PING_TIMEOUT_MS = 1000;

/** One round trip with a timeout (the readiness probe's); sets redis_up. */
export async function pingRedis(
  redis: RedisClient,
  metrics: JanitorMetrics,
  config: JanitorConfig,
): Promise<boolean> {
  const timeoutMs = Math.min(config.metrics.scrapeTimeoutMs, MAX_PING_TIMEOUT_MS);
  const up = await runPipeline(redis, [["PING"]], timeoutMs).then(
    ([reply]) => reply !== undefined && reply.error === undefined,
    () => false,
  );
  metrics.redisUp.set(up ? 1 : 0);
  return up;
}
