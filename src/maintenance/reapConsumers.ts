import type { Fence } from "../core/fence.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import { fenceArguments } from "../core/fence.js";

export interface ReapRequest {
  stream: string;
  group: string;
  idleMs: number;
  /** Never deleted: the janitor's own consumer (sweep.consumerName). */
  janitorConsumer: string;
  dryRun: boolean;
  /** The daemon reaps under the lease; the operator command runs unfenced. */
  fence?: Fence | undefined;
}

export interface ReapSummary {
  reaped: string[];
  /** Consumers kept because they still own pending entries. */
  keptWithPending: number;
  /** True when inactivity came from XINFO CONSUMERS `inactive` (7.2+), false for `idle`. */
  usedInactive: boolean;
  dryRun: boolean;
}

/**
 * Deletes the group's consumers that own nothing and were inactive at least idleMs: the check and
 * the delete are one script (scripts/reapConsumers.lua), so a consumer that reads in between
 * cannot exist: its entries are never discarded with it.
 */
export async function reapConsumers(
  redis: ScriptedRedis,
  request: ReapRequest,
): Promise<ReapSummary> {
  // One server: the lease; Redis Cluster: the fence in the stream's own slot (slotFence.ts).
  const fence =
    request.fence === undefined ? undefined : fenceArguments(request.fence, request.stream);
  const keys = [request.stream, ...(fence === undefined ? [] : [fence.key])];
  const reply = await redis.sjReapConsumers(
    keys.length,
    ...keys,
    request.group,
    request.idleMs,
    request.janitorConsumer,
    request.dryRun ? "1" : "0",
    fence?.value ?? "",
  );
  if (!Array.isArray(reply) || reply.length < 3 || !Array.isArray(reply[0])) {
    throw new Error(`unexpected reapConsumers reply: ${JSON.stringify(reply)}`);
  }
  return {
    reaped: reply[0].map(String),
    keptWithPending: Number(reply[1]),
    usedInactive: Number(reply[2]) === 1,
    dryRun: request.dryRun,
  };
}
