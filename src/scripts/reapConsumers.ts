import type { Fence } from "../core/fence.js";
import type { RedisErrorCode } from "../redis/redisErrors.js";
import { withFence } from "./scriptFence.js";
import { flag, flagArg, replyFields, ScriptReplyError, stringList } from "./scriptReplies.js";
import { callScript, scriptCall, type ScriptCall, type ScriptedRedis } from "./scriptedRedis.js";

/** The interface of src/scripts/lua/reapConsumers.lua: the request, its arguments, its reply. */
export interface ReapConsumersRequest {
  stream: string;
  group: string;
  /** Consumers inactive at least this long (and owning nothing) are deleted. */
  minInactiveMs: number;
  /** Never deleted: the janitor's own consumer. */
  janitorConsumer: string;
  dryRun: boolean;
  /** Undefined: unfenced (an operator's command). */
  fence: Fence | undefined;
}

export interface ReapConsumersResult {
  /** Deleted (in a dry run: would be). */
  reaped: string[];
  /** Consumers kept because they still own pending entries. */
  keptWithPending: number;
  /** True when inactivity came from XINFO CONSUMERS `inactive` (7.2+), false for `idle`. */
  usedInactive: boolean;
}

/** The script's errors; nothing changed on any of them. */
export const REAP_CONSUMERS_ERRORS: readonly RedisErrorCode[] = [
  "FENCED",
  "NOGROUP",
  "WRONGTYPE",
  "NOSUCHKEY",
];

export function reapConsumersArgs(request: ReapConsumersRequest): ScriptCall {
  const { keys, fenceValue } = withFence([request.stream], request.fence, request.stream);
  return scriptCall(keys, [
    request.group,
    request.minInactiveMs,
    request.janitorConsumer,
    flagArg(request.dryRun),
    fenceValue,
  ]);
}

export function parseReapConsumersReply(reply: unknown): ReapConsumersResult {
  const [reaped, keptWithPending, usedInactive] = replyFields("reapConsumers", reply, 3);
  if (!Array.isArray(reaped)) {
    throw new ScriptReplyError(`unexpected reapConsumers reply: ${JSON.stringify(reply)}`);
  }
  return {
    reaped: stringList(reaped),
    keptWithPending: Number(keptWithPending),
    usedInactive: flag(usedInactive),
  };
}

/** One call: the check (owns nothing, inactive long enough) and the delete, atomically. */
export async function runReapConsumers(
  redis: ScriptedRedis,
  request: ReapConsumersRequest,
): Promise<ReapConsumersResult> {
  return parseReapConsumersReply(
    await callScript(redis, "sjReapConsumers", reapConsumersArgs(request)),
  );
}
