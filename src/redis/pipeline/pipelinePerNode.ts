import { withTimeout } from "../../core/withTimeout.js";
import type { Cluster, Redis } from "ioredis";
import { keySlot } from "../../core/keySlot.js";
import { followRedirections, nodeAt, type RedirectableBatch } from "./followRedirections.js";
import {
  RedisUnavailableError,
  runPipeline,
  type Command,
  type PipelineReply,
} from "./runPipeline.js";

/**
 * Commands about one key (or keys of its slot); `key` decides which node they go to. Without a
 * key (TIME) the batch goes to every node that gets a pipeline, and takes the first answer.
 */
export interface KeyedCommands {
  readonly key: string | undefined;
  readonly commands: readonly Command[];
}

/** The replies of one batch, in order, or why its node gave none (every reply is then unknown). */
export type BatchOutcome =
  | { readonly replies: PipelineReply[]; readonly node: string; readonly error?: undefined }
  | { readonly error: RedisUnavailableError; readonly node: string; readonly replies?: undefined };

/**
 * Reads on Redis Cluster: a pipeline may only hold keys of one node, and one node that does not
 * answer must not take the others' readings down with it. The batches are grouped by the node
 * that serves each key's slot (the client's slot map), one pipeline per node, all sent at once
 * and bounded together by timeoutMs. A node that fails or times out fails only its own batches;
 * a batch answered MOVED or ASK (after a failover or a slot migration) is read again at the node
 * the cluster named, within the same bound, and a MOVED refreshes the slot map
 * (followRedirections): ioredis does not do it for pipelines that hold TIME or several slots.
 * A batch whose node does not answer (a killed master) is read from the new owner by a later
 * read, never answered with a stale value.
 *
 * Each node's pipeline goes on that node's connection, not through the cluster client's pipeline:
 * ioredis checks that a pipeline's keys belong to one "slots allocation group", the list of nodes
 * (master and replicas) its map holds for each slot. A MOVED answered to any other command on the
 * connection points that one slot at the new master alone (or with the old master's replicas)
 * until the slot map refresh it starts comes back, so the new master's slots were two groups:
 * during a slot migration, a whole status sample failed with "All keys in the pipeline should
 * belong to the same slots allocation group" (README "Redis Cluster").
 */
export async function pipelinePerNode(
  redis: Cluster,
  batches: readonly KeyedCommands[],
  timeoutMs: number,
): Promise<BatchOutcome[]> {
  const deadline = performance.now() + timeoutMs;
  await slotMap(redis, timeoutMs);
  const byNode = new Map<string, number[]>();
  const keyless: number[] = [];
  batches.forEach((batch, index) => {
    if (batch.key === undefined) {
      keyless.push(index);
      return;
    }
    const node = redis.slots[keySlot(batch.key)]?.[0] ?? "unknown";
    const members = byNode.get(node);
    if (members === undefined) byNode.set(node, [index]);
    else members.push(index);
  });
  if (keyless.length > 0 && byNode.size === 0) {
    const anyNode = redis.slots.find((owners) => owners.length > 0)?.[0] ?? "unknown";
    byNode.set(anyNode, []);
  }
  const outcomes = new Array<BatchOutcome | undefined>(batches.length);
  await Promise.all(
    [...byNode].map(async ([node, own]) => {
      const members = node === "unknown" ? own : [...keyless, ...own];
      const commands = members.flatMap((index) => batches[index]?.commands ?? []);
      try {
        if (node === "unknown") throw new RedisUnavailableError("no node serves this slot");
        // On the node's own connection: ioredis refuses a cluster pipeline whose keys its map
        // files under two groups of nodes, which one MOVED makes of one master's slots until
        // its refresh comes back (see the comment of pipelinePerNode).
        const connection = await connectionOf(redis, node, deadline);
        const replies = await runPipeline(connection, commands, deadline - performance.now());
        let offset = 0;
        for (const index of members) {
          const count = batches[index]?.commands.length ?? 0;
          const mine = replies.slice(offset, offset + count);
          offset += count;
          // A keyless batch keeps the first answer without errors.
          const earlier = outcomes[index];
          if (earlier?.replies === undefined || earlier.replies.some((reply) => reply.error))
            outcomes[index] = { node, replies: mine };
        }
      } catch (error) {
        const failure =
          error instanceof RedisUnavailableError
            ? error
            : new RedisUnavailableError(error instanceof Error ? error.message : String(error));
        for (const index of members) outcomes[index] ??= { node, error: failure };
      }
    }),
  );
  await redirected(redis, batches, outcomes, deadline);
  return outcomes.map(
    (outcome) =>
      outcome ?? { node: "unknown", error: new RedisUnavailableError("no node was asked") },
  );
}

/** Follows the redirections of the keyed batches that got replies, updating their outcomes. */
async function redirected(
  redis: Cluster,
  batches: readonly KeyedCommands[],
  outcomes: (BatchOutcome | undefined)[],
  deadline: number,
): Promise<void> {
  const answered: (RedirectableBatch & { index: number })[] = [];
  outcomes.forEach((outcome, index) => {
    const batch = batches[index];
    if (batch?.key === undefined || outcome?.replies === undefined) return;
    answered.push({
      index,
      commands: batch.commands,
      replies: outcome.replies,
      node: outcome.node,
    });
  });
  await followRedirections(redis, answered, deadline);
  for (const { index, node, replies, error } of answered) {
    outcomes[index] =
      replies === undefined
        ? { node, error: error ?? new RedisUnavailableError("no reply") }
        : { node, replies };
  }
}

/**
 * The node's own connection. A node the client no longer has (a killed master, still named by the
 * map until the cluster fails it over) gives way to another master's connection: its MOVED
 * replies are followed (followRedirections) and a keyless TIME is answered there, as ioredis's
 * own pipeline did by sending such a slot's commands to a random node.
 */
async function connectionOf(redis: Cluster, node: string, deadline: number): Promise<Redis> {
  try {
    return await nodeAt(redis, node, deadline);
  } catch (error) {
    const other = redis.nodes("master")[0];
    if (other === undefined) throw error;
    return other;
  }
}

/** The slot map arrives with the first connection; wait for it, within the same budget. */
async function slotMap(redis: Cluster, timeoutMs: number): Promise<void> {
  if (redis.slots.length > 0 && redis.status === "ready") return;
  if (redis.status === "wait") redis.connect().catch(() => undefined);
  const ready = new Promise<void>((resolve) => {
    if (redis.slots.length > 0) resolve();
    else redis.once("ready", () => resolve());
  });
  await withTimeout(ready, timeoutMs, (): never => {
    throw new RedisUnavailableError(`no cluster slot map within ${timeoutMs} ms`);
  });
}
