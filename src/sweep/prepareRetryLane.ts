import type { Fence } from "../core/fence.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { runEnsureRetryLane } from "../scripts/ensureRetryLane.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import { requeueRefusal } from "./checkRequeueTarget.js";

/**
 * Before a sweep of a group with a retry lane: the lane exists with the group's consumer group
 * (created when first needed and again after a DEL). Returns why the group must be refused
 * (another group reads the lane and would receive the copies), or undefined. checkRequeueTarget
 * saw the same before (at start-up too); this is the atomic check that goes with the create.
 */
export async function prepareRetryLane(
  redis: ScriptedRedis,
  group: ResolvedGroup,
  fence: () => Fence | undefined,
): Promise<string | undefined> {
  const lane = group.retryLaneStream;
  if (lane === undefined) return undefined;
  const { otherGroups } = await runEnsureRetryLane(redis, {
    stream: group.stream,
    lane,
    group: group.group,
    fence: fence(),
  });
  if (otherGroups.length === 0) return undefined;
  const conflict = { groupId: group.id, requeueStream: lane, otherGroups, retryLane: true };
  return requeueRefusal(conflict, "requeue");
}
