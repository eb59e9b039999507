import type { Fence } from "../core/fence.js";
import { redriveTaskKeys, type RedriveTask, type RedriveTaskStatus } from "../core/redriveTask.js";
import type { RedisErrorCode } from "../redis/redisErrors.js";
import { withFence } from "./scriptFence.js";
import { replyFields } from "./scriptReplies.js";
import { callScript, scriptCall, type ScriptCall, type ScriptedRedis } from "./scriptedRedis.js";

/** The interface of src/scripts/lua/redriveTaskBatch.lua: one fenced batch of a redrive task. */
export interface RedriveTaskBatchRequest {
  task: Pick<RedriveTask, "id" | "deadLetterStream" | "target" | "index">;
  fence: Fence | undefined;
  scanLimit: number;
  moveLimit: number;
}

export interface RedriveTaskBatchResult {
  /** After the call; "" when the task is gone. */
  status: RedriveTaskStatus | "";
  movedNow: number;
  moved: number;
  toMove: number;
  failure: string;
  /** The call's own duration (Redis TIME inside the script). */
  durationMs: number;
}

/** The script's errors; nothing changed on any of them. */
export const REDRIVE_TASK_BATCH_ERRORS: readonly RedisErrorCode[] = ["FENCED"];

function redriveTaskBatchArgs(request: RedriveTaskBatchRequest): ScriptCall {
  const { task } = request;
  const { task: key, active } = redriveTaskKeys(task.deadLetterStream, task.id);
  const { keys, fenceValue } = withFence(
    [key, active, task.deadLetterStream, task.target, task.index],
    request.fence,
    task.deadLetterStream,
  );
  return scriptCall(keys, [fenceValue, request.scanLimit, request.moveLimit]);
}

function parseRedriveTaskBatchReply(reply: unknown): RedriveTaskBatchResult {
  const [status, movedNow, moved, toMove, failure, durationUs] = replyFields(
    "redriveTaskBatch",
    reply,
    6,
  );
  return {
    status: String(status) as RedriveTaskStatus | "",
    movedNow: Number(movedNow),
    moved: Number(moved),
    toMove: Number(toMove),
    failure: String(failure),
    durationMs: Number(durationUs) / 1000,
  };
}

export async function runRedriveTaskBatch(
  redis: ScriptedRedis,
  request: RedriveTaskBatchRequest,
): Promise<RedriveTaskBatchResult> {
  return parseRedriveTaskBatchReply(
    await callScript(redis, "sjRedriveTaskBatch", redriveTaskBatchArgs(request)),
  );
}
