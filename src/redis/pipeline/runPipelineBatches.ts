import type { RedisClient } from "../RedisClient.js";
import { RedisTimeoutError, runPipeline, type Command, type PipelineReply } from "./runPipeline.js";

/**
 * Commands per pipeline: about a millisecond of Redis time and a few hundred kilobytes of
 * client-side objects. A scrape of 10,000 groups is 40,000 commands: sent as one pipeline, every
 * command object, promise and reply of the scrape is alive at once, survives the young-generation
 * collections and inflates the old generation (and RSS) by hundreds of megabytes.
 */
const PIPELINE_BATCH_SIZE = 1000;

export interface BatchOptions {
  /** Bound on all the batches together, as on one pipeline. */
  timeoutMs: number;
  /** Commands per pipeline (default PIPELINE_BATCH_SIZE). */
  batchSize?: number;
  /** Monotonic ms (injected by tests). */
  now?: () => number;
}

/**
 * Runs the commands as consecutive pipelines of at most batchSize commands, one round trip each,
 * and returns their replies in order, exactly as runPipeline would for one pipeline. The whole run
 * shares one deadline: a batch gets what is left of options.timeoutMs, and a run that outlasts it
 * throws RedisUnavailableError, whatever batch it was in. Only one batch is in flight, so the
 * client holds one batch's commands at a time, and Redis never sees one huge pipeline either.
 */
export async function runPipelineBatches(
  redis: RedisClient,
  commands: readonly Command[],
  options: BatchOptions,
): Promise<PipelineReply[]> {
  const batchSize = Math.max(1, options.batchSize ?? PIPELINE_BATCH_SIZE);
  const now = options.now ?? (() => performance.now());
  const deadline = now() + options.timeoutMs;
  // One message for the whole run, whichever batch ran out: the refresher logs an outage only
  // when its message changes, so it must not carry the milliseconds one batch had left.
  const timedOut = (): RedisTimeoutError =>
    new RedisTimeoutError(`redis did not answer within ${options.timeoutMs} ms`);
  const replies: PipelineReply[] = [];
  for (let start = 0; start < commands.length; start += batchSize) {
    // A deadline already spent fails in runPipeline, before anything is sent.
    const leftMs = deadline - now();
    const batch = commands.slice(start, start + batchSize);
    let batchReplies: PipelineReply[];
    try {
      batchReplies = await runPipeline(redis, batch, leftMs);
    } catch (error) {
      throw error instanceof RedisTimeoutError ? timedOut() : error;
    }
    for (const reply of batchReplies) replies.push(reply);
  }
  return replies;
}
