import { emptyResult, type GroupSweepResult } from "./GroupSweepResult.js";
import type { ResolvedGroup } from "./resolveGroup.js";
import { sweepOnce, type SweepContext } from "./sweepOnce.js";

/**
 * Sweeps the groups one after another. A failing group is reported and the next one is swept;
 * only a fenced script (the lease has moved) ends the pass, since every later script would be
 * refused too.
 */
export async function sweepAll(
  groups: readonly ResolvedGroup[],
  context: SweepContext,
  signal: AbortSignal,
): Promise<GroupSweepResult[]> {
  const results: GroupSweepResult[] = [];
  let stopReason: string | undefined;
  for (const group of groups) {
    if (stopReason === undefined && signal.aborted) stopReason = "not swept: the sweep was stopped";
    if (stopReason !== undefined) {
      results.push({
        ...emptyResult(group.stream, group.group),
        error: stopReason,
        errorKind: "fenced",
      });
      continue;
    }
    const result = await sweepOnce(group, context, signal);
    results.push(result);
    if (result.errorKind === "fenced")
      stopReason = "not swept: the lease is held by another process";
  }
  return results;
}
