import type { Fence } from "../core/fence.js";
import type { RedisErrorCode } from "../redis/redisErrors.js";
import { withFence } from "./scriptFence.js";
import { flag, replyFields, stringList } from "./scriptReplies.js";
import { callScript, scriptCall, type ScriptCall, type ScriptedRedis } from "./scriptedRedis.js";

/** The interface of src/scripts/lua/ensureRetryLane.lua: the request, its arguments, its reply. */
export interface EnsureRetryLaneRequest {
  /** The source stream: the fence is the one of its slot (the lane shares it). */
  stream: string;
  lane: string;
  group: string;
  fence: Fence | undefined;
}

export interface EnsureRetryLaneResult {
  /** This call created the lane's group (and the lane when it was missing). */
  created: boolean;
  /** Other groups reading the lane: the lane is refused and nothing changed. */
  otherGroups: string[];
  /** The lane existed without its group (destroyed by hand): what it holds is delivered again. */
  recreated: boolean;
}

/** The script's errors; nothing changed on any of them. */
export const ENSURE_RETRY_LANE_ERRORS: readonly RedisErrorCode[] = ["FENCED", "WRONGTYPE"];

function ensureRetryLaneArgs(request: EnsureRetryLaneRequest): ScriptCall {
  const { keys, fenceValue } = withFence([request.lane], request.fence, request.stream);
  return scriptCall(keys, [request.group, fenceValue]);
}

function parseEnsureRetryLaneReply(reply: unknown): EnsureRetryLaneResult {
  const [created, otherGroups, recreated] = replyFields("ensureRetryLane", reply, 3);
  return {
    created: flag(created),
    otherGroups: stringList(otherGroups),
    recreated: flag(recreated),
  };
}

/** One call: the checks (type, other groups) and the XGROUP CREATE ... MKSTREAM, atomically. */
export async function runEnsureRetryLane(
  redis: ScriptedRedis,
  request: EnsureRetryLaneRequest,
): Promise<EnsureRetryLaneResult> {
  return parseEnsureRetryLaneReply(
    await callScript(redis, "sjEnsureRetryLane", ensureRetryLaneArgs(request)),
  );
}
