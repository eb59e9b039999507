import { withTimeout } from "../../core/withTimeout.js";
import type { Cluster, Redis } from "ioredis";
import {
  RedisUnavailableError,
  runPipeline,
  type Command,
  type PipelineReply,
} from "./runPipeline.js";

/** What a batch needs to be sent again: where, and whether each command needs ASKING first. */
interface Redirection {
  readonly kind: "MOVED" | "ASK";
  /** "host:port", as the cluster names its nodes in CLUSTER SLOTS and in MOVED/ASK. */
  readonly node: string;
}

/** The commands of one batch, and its replies once it has some. */
export interface RedirectableBatch {
  readonly commands: readonly Command[];
  replies?: PipelineReply[] | undefined;
  error?: RedisUnavailableError | undefined;
  node: string;
}

/**
 * Rounds of redirection one read follows: MOVED to a new owner, then ASK while that owner is
 * itself migrating the slot, then one spare. Each round is one pipeline per target node.
 */
const MAX_ROUNDS = 3;

const REDIRECTION = /^(MOVED|ASK) \d+ (\S+)$/u;

function redirectionOf(replies: readonly PipelineReply[] | undefined): Redirection | undefined {
  for (const reply of replies ?? []) {
    const match = REDIRECTION.exec(reply.error?.message ?? "");
    if (match !== null) return { kind: match[1] as Redirection["kind"], node: String(match[2]) };
  }
  return undefined;
}

/**
 * Re-reads every batch whose replies say MOVED or ASK at the node the cluster named, until none
 * does (MAX_ROUNDS at most, within the deadline), replacing the batch's replies in place.
 *
 * ioredis follows a redirection inside a Cluster pipeline only when every command in it is
 * flagged read-only and every error is the same: a pipeline that starts with TIME, or that holds
 * keys of two slots, or one missing group next to a MOVED, hands MOVED to the caller and leaves
 * its slot map as it was, so every later read went to the old node again. Here a MOVED also
 * refreshes the client's slot map (for the next read, and for the sweep's and discovery's view of
 * the nodes). Only reads are sent this way: sending one twice changes nothing.
 */
export async function followRedirections(
  redis: Cluster,
  batches: readonly RedirectableBatch[],
  deadline: number,
): Promise<void> {
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    const byTarget = new Map<string, { to: Redirection; members: RedirectableBatch[] }>();
    for (const batch of batches) {
      const to = redirectionOf(batch.replies);
      if (to === undefined) continue;
      const target = `${to.kind} ${to.node}`;
      const group = byTarget.get(target) ?? { to, members: [] };
      group.members.push(batch);
      byTarget.set(target, group);
    }
    if (byTarget.size === 0 || performance.now() >= deadline) return;
    const moved = [...byTarget.values()].some(({ to }) => to.kind === "MOVED");
    if (moved) await refreshSlotMap(redis, deadline - performance.now());
    await Promise.all(
      [...byTarget.values()].map(({ to, members }) => resend(redis, to, members, deadline)),
    );
  }
}

/** One pipeline to the node named by the redirection, with the members' commands in order. */
async function resend(
  redis: Cluster,
  to: Redirection,
  members: readonly RedirectableBatch[],
  deadline: number,
): Promise<void> {
  // ASKING lets the importing node answer the next command only: one before each command.
  const wrap = (command: Command): Command[] =>
    to.kind === "ASK" ? [["ASKING"], command] : [command];
  const step = to.kind === "ASK" ? 2 : 1;
  try {
    const node = await nodeAt(redis, to.node, deadline);
    const commands = members.flatMap((batch) => batch.commands.flatMap(wrap));
    const replies = await runPipeline(node, commands, deadline - performance.now());
    let offset = 0;
    for (const batch of members) {
      const count = batch.commands.length * step;
      const own = replies.slice(offset, offset + count);
      batch.replies = own.filter((_, i) => i % step === step - 1);
      batch.node = to.node;
      offset += count;
    }
  } catch (error) {
    const failure =
      error instanceof RedisUnavailableError
        ? error
        : new RedisUnavailableError(error instanceof Error ? error.message : String(error));
    for (const batch of members) {
      batch.replies = undefined;
      batch.error = failure;
      batch.node = to.node;
    }
  }
}

/** The client's connection to that node; a node it does not know yet comes with a fresh map. */
export async function nodeAt(redis: Cluster, address: string, deadline: number): Promise<Redis> {
  const find = (): Redis | undefined =>
    redis.nodes("all").find((node) => `${node.options.host}:${node.options.port}` === address);
  const known = find();
  if (known !== undefined) return known;
  await refreshSlotMap(redis, deadline - performance.now());
  const found = find();
  if (found === undefined) throw new RedisUnavailableError(`${address} is not in the slot map`);
  return found;
}

/**
 * Asks the cluster for its slot map again, waiting at most timeoutMs. A refresh that fails or is
 * late is no error here: the batches still go to the node the redirection named.
 */
async function refreshSlotMap(redis: Cluster, timeoutMs: number): Promise<void> {
  const refreshed = new Promise<void>((resolve) => {
    redis.refreshSlotsCache(() => resolve());
  });
  await withTimeout(refreshed, Math.max(timeoutMs, 0), () => undefined);
}
