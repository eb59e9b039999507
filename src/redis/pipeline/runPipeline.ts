import { withTimeout } from "../../core/withTimeout.js";
import type { RedisClient } from "../RedisClient.js";

export type Command = readonly [name: string, ...args: (string | number)[]];

/** One command's outcome: Redis answers errors per command inside a pipeline. */
export type PipelineReply =
  { error: Error; value?: undefined } | { error?: undefined; value: unknown };

/** The reply's value, or its Redis error thrown (so one try/catch classifies a group's reads). */
export function replyValue(reply: PipelineReply | undefined): unknown {
  if (reply === undefined) throw new Error("missing reply");
  if (reply.error) throw reply.error;
  return reply.value;
}

/** The whole pipeline failed or timed out: nothing it returned can be trusted. */
export class RedisUnavailableError extends Error {
  override name = "RedisUnavailableError";
}

/** The pipeline's answer did not come within its time bound. */
export class RedisTimeoutError extends RedisUnavailableError {
  override name = "RedisTimeoutError";
}

/** Connection states in which a command would wait in the offline queue instead of being sent. */
const DISCONNECTED: ReadonlySet<string> = new Set([
  "reconnecting",
  "close",
  "end",
  "disconnecting",
]);

/**
 * Throws RedisUnavailableError at once while the connection is down: commands would wait in the
 * offline queue until they time out, and a scrape every few seconds would pile thousands up.
 */
export function requireConnected(redis: RedisClient): void {
  if (DISCONNECTED.has(redis.status)) {
    throw new RedisUnavailableError(`redis connection is ${redis.status}`);
  }
}

/**
 * The call's answer, or RedisTimeoutError (with `message`) after timeoutMs; without timeoutMs,
 * whenever it comes. A late answer, or a late failure, is dropped on the floor: the command
 * itself cannot be recalled, but its failure must not surface as an unhandled rejection.
 */
export async function answerWithin<T>(
  call: Promise<T>,
  timeoutMs: number | undefined,
  message: string,
): Promise<T> {
  if (timeoutMs === undefined) return call;
  return withTimeout(call, Math.max(timeoutMs, 1), (): never => {
    throw new RedisTimeoutError(message);
  });
}

/**
 * Sends the commands as one pipeline (one write, one round trip) and waits at most timeoutMs
 * (see answerWithin). Without timeoutMs the pipeline has no bound of its own: only the
 * connection's command timeout (a per-command error reply) applies.
 */
export async function runPipeline(
  redis: RedisClient,
  commands: readonly Command[],
  timeoutMs?: number,
): Promise<PipelineReply[]> {
  if (commands.length === 0) return [];
  requireConnected(redis);
  // A caller's deadline can pass before its next batch (pipelinePerNode, runPipelineBatches):
  // sending it would cost Redis work whose answer nobody waits for.
  if (timeoutMs !== undefined && timeoutMs <= 0) {
    throw new RedisTimeoutError(
      "redis did not answer in time: the time bound was spent before the pipeline was sent",
    );
  }
  const pipeline = redis.pipeline();
  for (const [name, ...args] of commands) pipeline.call(name, ...args);
  try {
    const message = `redis did not answer within ${timeoutMs} ms`;
    const results = await answerWithin(pipeline.exec(), timeoutMs, message);
    if (results === null || results.length !== commands.length) {
      throw new RedisUnavailableError("the pipeline was discarded");
    }
    return results.map(([error, value]) => (error ? { error } : { value }));
  } catch (error) {
    if (error instanceof RedisUnavailableError) throw error;
    throw new RedisUnavailableError(error instanceof Error ? error.message : String(error));
  }
}
