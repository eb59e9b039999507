import { deadLetterIndexKeys } from "../core/deadLetterIndex.js";
import type { Fence } from "../core/fence.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { RedisErrorCode } from "../redis/redisErrors.js";
import { withFence } from "./scriptFence.js";
import { flag, replyFields } from "./scriptReplies.js";
import { callScript, scriptCall, type ScriptCall, type ScriptedRedis } from "./scriptedRedis.js";

/** The interface of src/scripts/lua/indexDeadLetters.lua: the request, its arguments, its reply. */
export interface IndexDeadLettersRequest {
  group: Pick<ResolvedGroup, "stream" | "group" | "deadLetterStream">;
  /** Dead letters looked at by one call. */
  pageSize: number;
  fence: Fence | undefined;
}

export interface IndexDeadLettersResult {
  /** The index holds every dead letter of the group (now, or already). */
  complete: boolean;
  /** Index entries this call added. */
  indexed: number;
}

/** The script's errors; nothing changed on any of them. */
export const INDEX_DEAD_LETTERS_ERRORS: readonly RedisErrorCode[] = ["FENCED", "WRONGTYPE"];

function indexDeadLettersArgs(request: IndexDeadLettersRequest): ScriptCall {
  const { group } = request;
  const { index, state } = deadLetterIndexKeys(group);
  const { keys, fenceValue } = withFence(
    [group.deadLetterStream, index, state],
    request.fence,
    group.stream,
  );
  return scriptCall(keys, [group.stream, group.group, request.pageSize, fenceValue]);
}

/** One page of the build; a complete index costs one HGET. Errors: INDEX_DEAD_LETTERS_ERRORS. */
export async function runIndexDeadLetters(
  redis: ScriptedRedis,
  request: IndexDeadLettersRequest,
): Promise<IndexDeadLettersResult> {
  const reply = await callScript(redis, "sjIndexDeadLetters", indexDeadLettersArgs(request));
  const [complete, indexed] = replyFields("indexDeadLetters", reply, 2);
  return { complete: flag(complete), indexed: Number(indexed) };
}
