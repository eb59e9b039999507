import type { Logger } from "pino";
import {
  detectCapabilities,
  UnsupportedRedisError,
  type RedisCapabilities,
} from "../redis/detectCapabilities.js";
import { briefError } from "../redis/ConnectionProblems.js";
import type { RedisClient } from "../redis/RedisClient.js";

/**
 * Start-up must survive a Redis that is not there yet (a sidecar often starts first): retry with
 * backoff until the server answers, then check it is new enough. An unsupported server is final.
 */
export async function waitForRedis(
  redis: RedisClient,
  logger: Logger,
  signal: AbortSignal,
  /** Pause before the next attempt; injectable so tests run many attempts quickly. */
  backoffMs: (attempt: number) => number = (attempt) => Math.min(100 * 2 ** attempt, 5000),
  /** The failure in words (host:port, ECONNREFUSED, TLS, authentication...). */
  explain: (error: unknown) => string = (error) =>
    error instanceof Error ? error.message : String(error),
  /** True for a refusal (WRONGPASS) the connection logged already in these words. */
  saidAlready: (problem: string) => boolean = () => false,
): Promise<RedisCapabilities> {
  let logged: string | undefined;
  for (let attempt = 0; ; attempt += 1) {
    signal.throwIfAborted();
    try {
      return await detectCapabilities(redis);
    } catch (error) {
      if (error instanceof UnsupportedRedisError) throw error;
      // Once per change of the problem: the retries of one outage are one line.
      const problem = explain(error);
      if (problem !== logged && !saidAlready(problem)) {
        const err = briefError(error);
        logger.warn({ err, attempt, problem }, "redis is not answering yet; retrying");
      }
      logged = problem;
    }
    await pause(backoffMs(attempt), signal);
  }
}

/**
 * Resolves after `ms` or on abort, and removes its abort listener either way: one listener left
 * per retry raised MaxListenersExceededWarning after about two minutes against a closed port.
 */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
