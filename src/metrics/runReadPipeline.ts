import { Cluster } from "ioredis";
import type { RedisClient } from "../redis/scriptedRedis.js";
import { pipelinePerNode } from "./pipelinePerNode.js";
import { runPipeline, type Command, type PipelineReply } from "./runPipeline.js";

/** The key a read command is about: XINFO names a subcommand first; TIME has none. */
export function commandKey(command: Command): string | undefined {
  const [name, ...args] = command;
  const key = name.toUpperCase() === "XINFO" ? args[1] : args[0];
  return key === undefined ? undefined : String(key);
}

/**
 * Read-only commands for a scrape, on any topology. One server: one pipeline (runPipeline), which
 * throws RedisUnavailableError when Redis does not answer. Redis Cluster: one pipeline per node
 * (pipelinePerNode); a node that does not answer turns only its own commands into
 * RedisUnavailableError replies, so only the groups it serves lose their samples.
 */
export async function runReadPipeline(
  redis: RedisClient,
  commands: readonly Command[],
  timeoutMs: number,
): Promise<PipelineReply[]> {
  if (!(redis instanceof Cluster)) return runPipeline(redis, commands, timeoutMs);
  const outcomes = await pipelinePerNode(
    redis,
    commands.map((command) => ({ key: commandKey(command), commands: [command] })),
    timeoutMs,
  );
  return outcomes.map(
    (outcome) => outcome.replies?.[0] ?? { error: outcome.error ?? new Error("no reply") },
  );
}
