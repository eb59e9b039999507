import { backoffPolicy, dueAfterMs } from "../core/backoffThreshold.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { PipelineReply } from "../redis/pipeline/runPipeline.js";
import { classifyReplyError, parsePendingPage, parseXinfoGroups } from "../redis/replies.js";
import type { RetryLaneGroup } from "../scripts/readGroupStatsParts.js";
import type { GroupValues } from "./GroupReading.js";

/**
 * The pipelined read of a lane's work (readGroupStats.lua's laneGroupStats): XINFO GROUPS of
 * the lane and, when the group has something pending there, its oldest pending entry. A lane not
 * created yet holds nothing; a lane without the group, or one that cannot be read, is unknown.
 */
export function laneGroupFromReplies(
  name: string,
  groups: PipelineReply,
  oldest: PipelineReply,
): RetryLaneGroup | undefined {
  if (groups.error) {
    if (classifyReplyError(groups.error) !== "no-stream") return undefined;
    return {
      pending: 0,
      lag: 0,
      oldestPendingId: undefined,
      oldestPendingIdleMs: 0,
      oldestPendingDeliveries: 0,
    };
  }
  const info = parseXinfoGroups(groups.value).find((group) => group.name === name);
  if (info === undefined) return undefined;
  const [first] = info.pending > 0 && !oldest.error ? parsePendingPage(oldest.value) : [];
  return {
    pending: info.pending,
    lag: info.lag,
    oldestPendingId: first?.id,
    oldestPendingIdleMs: first?.idleMs ?? 0,
    oldestPendingDeliveries: first?.deliveries ?? 0,
  };
}

/**
 * The lane's lag when it can be trusted: null when Redis reports none or more than the lane
 * holds (the same bound as the source's, see validLag); undefined when the lane's work is unknown.
 */
export function laneLag(values: GroupValues): number | null | undefined {
  const lane = values.retryLaneGroup;
  if (lane === undefined) return undefined;
  if (lane.lag === null || lane.lag > (values.retryLaneLength ?? 0)) return null;
  return lane.lag;
}

/**
 * Due copies in the lane: whether its oldest pending copy is past the group's claim threshold (a
 * lower bound, as the source's count before a PEL scan). 0 when the lane's work is unknown.
 */
export function laneDue(group: ResolvedGroup, values: GroupValues): number {
  const lane = values.retryLaneGroup;
  if (lane === undefined || lane.pending === 0 || lane.oldestPendingId === undefined) return 0;
  const threshold = dueAfterMs(
    backoffPolicy(group),
    lane.oldestPendingId,
    lane.oldestPendingDeliveries,
  );
  return lane.oldestPendingIdleMs >= threshold ? 1 : 0;
}
