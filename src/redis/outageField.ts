import { briefError } from "./ConnectionProblems.js";
import { RedisUnavailableError } from "./pipeline/runPipeline.js";

/**
 * An error as a log field: a Redis outage in words without its stack (the connection's own log
 * says the cause once per change of state, and where ioredis noticed it helps nobody), anything
 * else whole, since a stack is how a bug is found.
 */
export function outageField(error: unknown): unknown {
  return error instanceof RedisUnavailableError ? briefError(error) : error;
}
