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

const DISCONNECTED: ReadonlySet<string> = new Set([
  "reconnecting",
  "close",
  "end",
  "disconnecting",
]);

/**
 * Sends the commands as one pipeline (one write, one round trip) and waits at most timeoutMs.
 * A late answer is dropped on the floor: the commands themselves cannot be recalled, but their
 * failure must not surface as an unhandled rejection. Without timeoutMs the pipeline has no bound
 * of its own: only the connection's command timeout (a per-command error reply) applies.
 */
export async function runPipeline(
  redis: RedisClient,
  commands: readonly Command[],
  timeoutMs?: number,
): Promise<PipelineReply[]> {
  if (commands.length === 0) return [];
  // While the connection is down, commands would wait in the offline queue until they time out;
  // a scrape every few seconds would pile thousands of them up. Say "down" at once instead.
  if (DISCONNECTED.has(redis.status)) {
    throw new RedisUnavailableError(`redis connection is ${redis.status}`);
  }
  const pipeline = redis.pipeline();
  for (const [name, ...args] of commands) pipeline.call(name, ...args);
  const executed = pipeline.exec();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    if (timeoutMs === undefined) return;
    timer = setTimeout(
      () => {
        reject(new RedisTimeoutError(`redis did not answer within ${timeoutMs} ms`));
      },
      Math.max(timeoutMs, 1),
    );
  });
  try {
    const results = await Promise.race([executed, timedOut]);
    if (results === null || results.length !== commands.length) {
      throw new RedisUnavailableError("the pipeline was discarded");
    }
    return results.map(([error, value]) => (error ? { error } : { value }));
  } catch (error) {
    executed.catch(() => undefined);
    if (error instanceof RedisUnavailableError) throw error;
    throw new RedisUnavailableError(error instanceof Error ? error.message : String(error));
  } finally {
    clearTimeout(timer);
  }
}
