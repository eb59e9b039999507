import { Cluster } from "../ioredis.js";
import type { RedisClient } from "../RedisClient.js";
import { pipelinePerNode } from "./pipelinePerNode.js";
import { type Command, type PipelineReply } from "./runPipeline.js";
import { runPipelineBatches } from "./runPipelineBatches.js";

/** The key a read command is about: XINFO names a subcommand first; TIME has none. */
function commandKey(command: Command): string | undefined {
  const [name, ...args] = command;
  const key = name.toUpperCase() === "XINFO" ? args[1] : args[0];
  return key === undefined ? undefined : String(key);
}

/**
 * Read-only commands for a scrape, on any topology. One server: consecutive pipelines of bounded
 * size under one deadline (runPipelineBatches), which throw RedisUnavailableError when Redis does
 * not answer. Redis Cluster: one pipeline per node
 * (pipelinePerNode); a node that does not answer turns only its own commands into
 * RedisUnavailableError replies, so only the groups it serves lose their samples.
 */
export async function runReadPipeline(
  redis: RedisClient,
  commands: readonly Command[],
  timeoutMs: number,
  batchSize?: number,
): Promise<PipelineReply[]> {
  if (!(redis instanceof Cluster)) {
    return runPipelineBatches(redis, commands, {
      timeoutMs,
      ...(batchSize === undefined ? {} : { batchSize }),
    });
  }
  const outcomes = await pipelinePerNode(
    redis,
    commands.map((command) => ({ key: commandKey(command), commands: [command] })),
    timeoutMs,
  );
  return outcomes.map(
    (outcome) => outcome.replies?.[0] ?? { error: outcome.error ?? new Error("no reply") },
  );
}
