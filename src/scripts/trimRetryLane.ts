import type { Fence } from "../core/fence.js";
import type { RedisErrorCode } from "../redis/redisErrors.js";
import { withFence } from "./scriptFence.js";
import { flag, replyFields } from "./scriptReplies.js";
import { callScript, scriptCall, type ScriptCall, type ScriptedRedis } from "./scriptedRedis.js";

/** The interface of src/scripts/lua/trimRetryLane.lua: the request, its arguments, its reply. */
export interface TrimRetryLaneRequest {
  /** The source stream: the fence is the one of its slot (the lane shares it). */
  stream: string;
  lane: string;
  group: string;
  fence: Fence | undefined;
  /** About this many copies removed per call at most. */
  pageSize: number;
}

export interface TrimRetryLaneResult {
  /** Copies removed: delivered to the group and acknowledged. */
  removed: number;
  /** XLEN of the lane afterwards. */
  length: number;
  /** More may be removable: call again. */
  more: boolean;
}

/** The script's errors; nothing changed on any of them. */
export const TRIM_RETRY_LANE_ERRORS: readonly RedisErrorCode[] = ["FENCED", "WRONGTYPE"];

function trimRetryLaneArgs(request: TrimRetryLaneRequest): ScriptCall {
  const { keys, fenceValue } = withFence([request.lane], request.fence, request.stream);
  return scriptCall(keys, [request.group, fenceValue, request.pageSize]);
}

/** One call: the floor of the lane's group and the XTRIM MINID up to it, atomically. */
export async function runTrimRetryLane(
  redis: ScriptedRedis,
  request: TrimRetryLaneRequest,
): Promise<TrimRetryLaneResult> {
  const reply = await callScript(redis, "sjTrimRetryLane", trimRetryLaneArgs(request));
  const [removed, length, more] = replyFields("trimRetryLane", reply, 3);
  return { removed: Number(removed), length: Number(length), more: flag(more) };
}
