import { replyFields } from "./scriptReplies.js";
import { callScript, scriptCall, type ScriptedRedis } from "./scriptedRedis.js";

/**
 * The interface of src/scripts/lua/cancelRedriveTask.lua: RUNNING becomes CANCELLING. Resolves
 * to the status before and after ("" when there is no such task). Not fenced: an operator's.
 */
export async function runCancelRedriveTask(
  redis: ScriptedRedis,
  taskKey: string,
): Promise<{ before: string; after: string }> {
  const reply = await callScript(redis, "sjCancelRedriveTask", scriptCall([taskKey], []));
  const [before, after] = replyFields("cancelRedriveTask", reply, 2);
  return { before: String(before), after: String(after) };
}
