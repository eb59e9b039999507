import type { RedisClient } from "../redis/RedisClient.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { parseXinfoGroupNames } from "../redis/replies.js";
import { redisErrorOf } from "../redis/redisErrors.js";

/** Copies appended to the group's requeue stream would also reach these other groups. */
export interface RequeueConflict {
  readonly groupId: string;
  readonly requeueStream: string;
  readonly otherGroups: readonly string[];
  /** The target is the group's retry lane, which its own group reads. */
  readonly retryLane: boolean;
}

/**
 * A copy appended to the group's requeue stream is delivered to every group that reads it: the
 * other groups that would receive duplicates, or undefined when there are none.
 */
export async function findRequeueConflict(
  redis: RedisClient,
  group: ResolvedGroup,
): Promise<RequeueConflict | undefined> {
  let names: string[];
  try {
    names = parseXinfoGroupNames(await redis.call("XINFO", "GROUPS", group.requeueStream));
  } catch (error) {
    // No target stream yet: nobody else can read the copies (XADD creates it with no groups).
    if (redisErrorOf(error)?.code === "NOSUCHKEY") return undefined;
    throw error;
  }
  return conflictAmong(group, names);
}

/** The conflict, given the names of the groups that read the group's requeue stream. */
export function conflictAmong(
  group: ResolvedGroup,
  names: readonly string[],
): RequeueConflict | undefined {
  const retryLane = group.retryLaneStream !== undefined;
  const others =
    group.requeueStream === group.stream || retryLane
      ? names.filter((name) => name !== group.group)
      : names.length > 1
        ? names
        : [];
  if (others.length === 0) return undefined;
  return {
    groupId: group.id,
    requeueStream: group.requeueStream,
    otherGroups: others,
    retryLane,
  };
}

/** The refusal of an operation that would append copies where other groups read them. */
export function requeueRefusal(
  conflict: RequeueConflict,
  operation: "requeue" | "redrive",
): string {
  if (conflict.retryLane) return retryLaneRefusal(conflict, operation);
  const refused =
    `refusing to ${operation} ${conflict.groupId}: requeue stream ${conflict.requeueStream} is ` +
    `also read by group(s) ${conflict.otherGroups.join(", ")}, which would receive duplicate ` +
    `copies; `;
  // A redrive works for every action: into the group's own retry lane.
  if (operation === "redrive") {
    return `${refused}redrive into the group's own retry lane with --to lane (its consumers read it), or give the group its own requeueStream`;
  }
  return (
    `${refused}give the group its own requeueStream or use action reassign` +
    `, or set retryLane: true (the group gets a retry lane of its own)`
  );
}

/** A retry lane is read by its own group only: the others would receive the copies too. */
function retryLaneRefusal(conflict: RequeueConflict, operation: "requeue" | "redrive"): string {
  return (
    `refusing to ${operation} ${conflict.groupId}: its retry lane ${conflict.requeueStream} is ` +
    `also read by group(s) ${conflict.otherGroups.join(", ")}, which would receive the copies ` +
    `too; a retry lane is read by its own group only (remove the others with XGROUP DESTROY, ` +
    `or set another requeueStream)`
  );
}

/**
 * Returns why a requeue group must be refused (other groups would receive duplicates), or
 * undefined when it is safe (or the group does not requeue).
 */
export async function checkRequeueTarget(
  redis: RedisClient,
  group: ResolvedGroup,
): Promise<string | undefined> {
  if (group.action !== "requeue") return undefined;
  const conflict = await findRequeueConflict(redis, group);
  return conflict === undefined ? undefined : requeueRefusal(conflict, "requeue");
}
