import type { RedisErrorCode } from "../redis/redisErrors.js";
import { deadLetterIndexKeys } from "../core/deadLetterIndex.js";
import type { DeadLetterSelection } from "./deadLetterSelection.js";
import { selectionArgv } from "./deadLetterSelection.js";
import { flag, heldByList, replyFields, stringList, type HeldBy } from "./scriptReplies.js";
import { callScript, scriptCall, type ScriptCall, type ScriptedRedis } from "./scriptedRedis.js";

/**
 * The interface of src/scripts/lua/redriveDeadLetters.lua: the request, its arguments, its reply.
 * Not fenced: an operator runs it, safely next to the daemon (see the script's header).
 */
export interface RedriveDeadLettersRequest extends DeadLetterSelection {
  deadLetterStream: string;
  /** Where the copies go: the group's requeueStream, or the source stream. */
  target: string;
}

export interface RedriveDeadLettersResult {
  nextCursor: string;
  examined: number;
  /** Moved (in a dry run: that would be). */
  moved: number;
  /** The range has been scanned completely (always with ids). */
  done: boolean;
  /** Too large to copy inside one script call: left in place. */
  oversizedIds: string[];
  /** The groups of the dead-letter stream that held selected dead letters back. */
  heldBackBy: HeldBy[];
  /** Selected dead letters held back (each counted once). */
  held: number;
  /** Given ids that are not dead letters of the group (and reason). */
  unknownIds: string[];
}

/** The script's errors; nothing changed on any of them. */
export const REDRIVE_DEAD_LETTERS_ERRORS: readonly RedisErrorCode[] = ["WRONGTYPE", "IDSEXHAUSTED"];

export function redriveDeadLettersArgs(request: RedriveDeadLettersRequest): ScriptCall {
  const { index } = deadLetterIndexKeys(request);
  return scriptCall([request.deadLetterStream, request.target, index], selectionArgv(request));
}

export function parseRedriveDeadLettersReply(reply: unknown): RedriveDeadLettersResult {
  const fields = replyFields("redriveDeadLetters", reply, 5);
  const [nextCursor, examined, moved, done, oversized, heldBackBy, held, unknown] = fields;
  return {
    nextCursor: String(nextCursor),
    examined: Number(examined),
    moved: Number(moved),
    done: flag(done),
    oversizedIds: stringList(oversized),
    heldBackBy: heldByList(heldBackBy),
    held: Number(held ?? 0),
    unknownIds: stringList(unknown),
  };
}

/** One page of a redrive (or of a count, in a dry run): copy and delete, atomically. */
export async function runRedriveDeadLetters(
  redis: ScriptedRedis,
  request: RedriveDeadLettersRequest,
): Promise<RedriveDeadLettersResult> {
  return parseRedriveDeadLettersReply(
    await callScript(redis, "sjRedriveDeadLetters", redriveDeadLettersArgs(request)),
  );
}
