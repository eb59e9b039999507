import { emptyResult, type GroupSweepResult } from "./GroupSweepResult.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { sweepOnce, type SweepContext } from "./sweepOnce.js";

/**
 * Sweeps the groups one after another. A failing group is reported and the next one is swept;
 * only a fenced script (the lease has moved) ends the pass, since every later script would be
 * refused too. Groups not reached because of a stop request are reported as interrupted.
 */
export async function sweepAll(
  groups: readonly ResolvedGroup[],
  context: SweepContext,
  signal: AbortSignal,
): Promise<GroupSweepResult[]> {
  const results: GroupSweepResult[] = [];
  let fenced = false;
  for (const group of groups) {
    if (fenced) {
      results.push({
        ...emptyResult(group.stream, group.group),
        error: "not swept: the lease is held by another process",
        errorKind: "fenced",
      });
    } else if (signal.aborted) {
      // A graceful stop is not a failure: the group is swept again by the next leader.
      results.push({ ...emptyResult(group.stream, group.group), interrupted: true });
    } else {
      const result = await sweepOnce(group, context, signal);
      results.push(result);
      fenced = result.errorKind === "fenced";
    }
  }
  return results;
}
