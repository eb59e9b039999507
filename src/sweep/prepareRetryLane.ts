import type { Fence } from "../core/fence.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { runEnsureRetryLane } from "../scripts/ensureRetryLane.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import { requeueRefusal } from "./checkRequeueTarget.js";

/** What preparing the lane found. */
export interface LanePreparation {
  /** Why the group must be refused (another group reads the lane), or undefined. */
  refusal: string | undefined;
  /** The lane existed without its group (destroyed by hand): the group was created again. */
  recreated: boolean;
}

/**
 * Before a sweep of a group with a retry lane: the lane exists with the group's consumer group
 * (created when first needed and again after a DEL or an XGROUP DESTROY). Refused when another
 * group reads the lane (it would receive the copies). checkRequeueTarget saw the same before (at
 * start-up too); this is the atomic check that goes with the create.
 */
export async function prepareRetryLane(
  redis: ScriptedRedis,
  group: ResolvedGroup,
  fence: () => Fence | undefined,
): Promise<LanePreparation> {
  const lane = group.retryLaneStream;
  if (lane === undefined) return { refusal: undefined, recreated: false };
  const { otherGroups, recreated } = await runEnsureRetryLane(redis, {
    stream: group.stream,
    lane,
    group: group.group,
    fence: fence(),
  });
  if (otherGroups.length === 0) return { refusal: undefined, recreated };
  const conflict = { groupId: group.id, requeueStream: lane, otherGroups, retryLane: true };
  return { refusal: requeueRefusal(conflict, "requeue"), recreated: false };
}
