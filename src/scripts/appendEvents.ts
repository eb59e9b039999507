import type { RedisErrorCode } from "../redis/redisErrors.js";
import { callScript, scriptCall, type ScriptedRedis } from "./scriptedRedis.js";

/**
 * The interface of src/scripts/lua/appendEvents.lua: one event as the script takes it, seven
 * values in the events stream's field order (type, at, stream, group, count, ids, detail); an
 * empty `at` is the call's Redis TIME.
 */
export type EncodedEvent = readonly [
  type: string,
  at: string,
  stream: string,
  group: string,
  count: string,
  ids: string,
  detail: string,
];

export interface AppendEventsRequest {
  streamKey: string;
  maxLen: number;
  by: string;
  events: readonly EncodedEvent[];
}

/** The script's errors, nothing written (ARGS, a malformed call, is classified OTHER). */
export const APPEND_EVENTS_ERRORS: readonly RedisErrorCode[] = ["WRONGTYPE"];

/** One call: the type check, then one XADD MAXLEN ~ per event; resolves to the entries added. */
export async function runAppendEvents(
  redis: ScriptedRedis,
  request: AppendEventsRequest,
): Promise<number> {
  const argv = [String(request.maxLen), request.by, ...request.events.flat()];
  return Number(await callScript(redis, "sjAppendEvents", scriptCall([request.streamKey], argv)));
}
