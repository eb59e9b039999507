import { emptyResult, type GroupSweepResult } from "./GroupSweepResult.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { laneCursorKey, sweepOnce, type SweepContext } from "./sweepOnce.js";
import { findIdleGroups } from "./findIdleGroups.js";

/**
 * A group the pass's reads proved idle: swept to the end with nothing to do, no script called.
 * Its cursors start over, as after a sweep whose scan wrapped.
 */
function idleResult(group: ResolvedGroup, context: SweepContext): GroupSweepResult {
  context.cursors.delete(group.id);
  context.cursors.delete(laneCursorKey(group));
  return { ...emptyResult(group.stream, group.group), complete: true };
}

/**
 * Sweeps the groups one after another. First one pipelined read of every group tells which
 * have nothing to do (findIdleGroups): those cost no script call. A failing group is reported
 * and the next one is swept; only a fenced script (the lease has moved) ends the pass, since
 * every later script would be refused too. Groups not reached because of a stop request are
 * reported as interrupted.
 */
export async function sweepAll(
  groups: readonly ResolvedGroup[],
  context: SweepContext,
  signal: AbortSignal,
): Promise<GroupSweepResult[]> {
  // Read once per pass: the fence's kind (one per slot on Cluster) is the term's, as its value.
  const fence = context.fence();
  const idle = signal.aborted ? [] : await findIdleGroups(groups, context.redis, fence);
  const results: GroupSweepResult[] = [];
  let fenced = false;
  for (const [index, group] of groups.entries()) {
    if (fenced) {
      results.push({
        ...emptyResult(group.stream, group.group),
        error: "not swept: the lease is held by another process",
        errorKind: "fenced",
      });
    } else if (signal.aborted) {
      // A graceful stop is not a failure: the group is swept again by the next leader.
      results.push({ ...emptyResult(group.stream, group.group), interrupted: true });
    } else if (idle[index] === true) {
      results.push(idleResult(group, context));
    } else {
      const result = await sweepOnce(group, context, signal, fence?.slotToken !== undefined);
      results.push(result);
      fenced = result.errorKind === "fenced";
    }
  }
  return results;
}
