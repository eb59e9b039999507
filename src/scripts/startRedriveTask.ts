import { redriveTaskKeys, taskFields, type RedriveTask } from "../core/redriveTask.js";
import { flag, replyFields } from "./scriptReplies.js";
import { callScript, scriptCall, type ScriptCall, type ScriptedRedis } from "./scriptedRedis.js";

/** The interface of src/scripts/lua/startRedriveTask.lua. Not fenced: an operator starts tasks. */
export interface StartRedriveTaskResult {
  /** False: another task of the dead-letter stream is active (activeId). */
  started: boolean;
  activeId: string;
}

function startRedriveTaskArgs(task: RedriveTask): ScriptCall {
  const { task: key, active } = redriveTaskKeys(task.deadLetterStream, task.id);
  return scriptCall([key, active], [task.id, ...taskFields(task).flat()]);
}

function parseStartRedriveTaskReply(reply: unknown): StartRedriveTaskResult {
  const [started, activeId] = replyFields("startRedriveTask", reply, 2);
  return { started: flag(started), activeId: String(activeId) };
}

export async function runStartRedriveTask(
  redis: ScriptedRedis,
  task: RedriveTask,
): Promise<StartRedriveTaskResult> {
  return parseStartRedriveTaskReply(
    await callScript(redis, "sjStartRedriveTask", startRedriveTaskArgs(task)),
  );
}
