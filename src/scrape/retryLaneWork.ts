import { backoffPolicy, dueAfterMs } from "../core/backoffThreshold.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { GroupValues } from "./GroupReading.js";

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
