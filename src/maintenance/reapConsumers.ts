import type { Fence } from "../core/fence.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import { runReapConsumers } from "../scripts/reapConsumers.js";

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
  const result = await runReapConsumers(redis, {
    stream: request.stream,
    group: request.group,
    minInactiveMs: request.idleMs,
    janitorConsumer: request.janitorConsumer,
    dryRun: request.dryRun,
    fence: request.fence,
  });
  return { ...result, dryRun: request.dryRun };
}
