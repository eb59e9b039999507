import type { RedisErrorCode } from "../redis/redisErrors.js";
import { integerReply } from "./scriptReplies.js";
import { callScript, scriptCall, type ScriptedRedis } from "./scriptedRedis.js";

/** The script's errors; nothing changed on any of them. */
export const REDRIVE_TASK_DIRECTORY_ERRORS: readonly RedisErrorCode[] = ["WRONGTYPE"];

/**
 * The interface of src/scripts/lua/redriveTaskDirectory.lua: adds task keys to the directory
 * (score: the start time) or removes them. Resolves to how many were added or removed.
 */
export async function runRedriveTaskDirectory(
  redis: ScriptedRedis,
  directory: string,
  change: { add: readonly string[]; startedAt: number } | { remove: readonly string[] },
): Promise<number> {
  const argv =
    "add" in change ? ["add", change.startedAt, ...change.add] : ["remove", 0, ...change.remove];
  const reply = await callScript(redis, "sjRedriveTaskDirectory", scriptCall([directory], argv));
  return integerReply("redriveTaskDirectory", reply);
}
