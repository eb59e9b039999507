import type { Logger } from "pino";
import {
  detectCapabilities,
  UnsupportedRedisError,
  type RedisCapabilities,
} from "../redis/detectCapabilities.js";
import type { RedisClient } from "../redis/scriptedRedis.js";

/**
 * Start-up must survive a Redis that is not there yet (a sidecar often starts first): retry with
 * backoff until the server answers, then check it is new enough. An unsupported server is final.
 */
export async function waitForRedis(
  redis: RedisClient,
  logger: Logger,
  signal: AbortSignal,
): Promise<RedisCapabilities> {
  for (let attempt = 0; ; attempt += 1) {
    signal.throwIfAborted();
    try {
      return await detectCapabilities(redis);
    } catch (error) {
      if (error instanceof UnsupportedRedisError) throw error;
      if (attempt === 0 || attempt % 10 === 0) {
        logger.warn({ err: error, attempt }, "redis is not answering yet; retrying");
      }
    }
    const delayMs = Math.min(100 * 2 ** attempt, 5000);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delayMs);
      signal.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  }
}
