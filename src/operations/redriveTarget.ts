import { defaultRetryLaneStream, type ResolvedGroup } from "../core/resolveGroup.js";
import { runEnsureRetryLane } from "../scripts/ensureRetryLane.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import { findRequeueConflict, type RequeueConflict } from "../sweep/checkRequeueTarget.js";

/**
 * Where `dlq redrive` puts the copies: the group's requeue target (undefined: requeueStream, else
 * the source), or `lane`: the group's own retry lane, whatever its action, so that only this
 * group sees them again even when others read the source.
 */
export type RedriveTo = "lane" | undefined;

/**
 * The group as the redrive sees it: with `lane`, its retry lane (retryLane's, or the default name
 * `{orders}:billing:retry`) is both the target and a lane, read by the group alone.
 */
export function redriveView(group: ResolvedGroup, to: RedriveTo): ResolvedGroup {
  if (to !== "lane") return group;
  const lane = group.retryLaneStream ?? defaultRetryLaneStream(group.stream, group.group);
  return { ...group, requeueStream: lane, retryLaneStream: lane };
}

/**
 * Before the first copy: the target other groups read (the refusal), or undefined. Into a lane
 * (not in a dry run), the lane and its group are made sure of by the fenced sweep's own script,
 * ensureRetryLane.lua, run without a fence as every operator script is: it creates the group at
 * id 0 when missing, and refuses (nothing changed) when another group reads the lane.
 */
export async function prepareRedriveTarget(
  redis: ScriptedRedis,
  view: ResolvedGroup,
  dryRun: boolean,
): Promise<RequeueConflict | undefined> {
  const conflict = await findRequeueConflict(redis, view);
  if (conflict !== undefined || dryRun || view.retryLaneStream === undefined) return conflict;
  const { otherGroups } = await runEnsureRetryLane(redis, {
    stream: view.stream,
    lane: view.retryLaneStream,
    group: view.group,
    fence: undefined,
  });
  if (otherGroups.length === 0) return undefined;
  return { groupId: view.id, requeueStream: view.retryLaneStream, otherGroups, retryLane: true };
}
