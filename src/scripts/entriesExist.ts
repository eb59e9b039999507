import { ScriptReplyError } from "./scriptReplies.js";
import { callScript, scriptCall, type ScriptCall, type ScriptedRedis } from "./scriptedRedis.js";

/** The interface of src/scripts/lua/entriesExist.lua: a bounded page of ids of one stream. */
export interface EntriesExistRequest {
  stream: string;
  ids: readonly string[];
}

/** The most ids one call looks up: a page of the console, about 50 microseconds of Redis time. */
export const MAX_IDS = 100;

export function entriesExistArgs(request: EntriesExistRequest): ScriptCall {
  if (request.ids.length > MAX_IDS) {
    throw new Error(`entriesExist: at most ${MAX_IDS} ids per call, got ${request.ids.length}`);
  }
  return scriptCall([request.stream], request.ids);
}

/** One boolean per id, in the request's order. */
export function parseEntriesExistReply(reply: unknown, count: number): boolean[] {
  if (!Array.isArray(reply) || reply.length !== count) {
    throw new ScriptReplyError("entriesExist: unexpected reply");
  }
  return reply.map((value) => Number(value) === 1);
}

export async function runEntriesExist(
  redis: ScriptedRedis,
  request: EntriesExistRequest,
): Promise<boolean[]> {
  if (request.ids.length === 0) return [];
  const reply = await callScript(redis, "sjEntriesExist", entriesExistArgs(request));
  return parseEntriesExistReply(reply, request.ids.length);
}
