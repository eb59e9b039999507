import type { RedisErrorCode } from "../redis/redisErrors.js";
import { deadLetterIndexKeys } from "../core/deadLetterIndex.js";
import type { DeadLetterSelection } from "./deadLetterSelection.js";
import { selectionArgv } from "./deadLetterSelection.js";
import { flag, heldByList, replyFields, stringList, type HeldBy } from "./scriptReplies.js";
import { callScript, scriptCall, type ScriptCall, type ScriptedRedis } from "./scriptedRedis.js";

/**
 * The interface of src/scripts/lua/purgeDeadLetters.lua: the request, its arguments, its reply.
 * Not fenced: an operator runs it, and the daemon never reads dead letters back.
 */
export interface PurgeDeadLettersRequest extends DeadLetterSelection {
  deadLetterStream: string;
}

export interface PurgeDeadLettersResult {
  nextCursor: string;
  examined: number;
  /** Deleted (in a dry run: that would be). */
  deleted: number;
  /** The range has been scanned completely (always with ids). */
  done: boolean;
  /** The groups of the dead-letter stream that held selected dead letters back. */
  heldBackBy: HeldBy[];
  /** Selected dead letters held back (each counted once). */
  held: number;
  /** Given ids that are not dead letters of the group (and reason). */
  unknownIds: string[];
}

/** The script's errors; nothing changed on any of them. */
export const PURGE_DEAD_LETTERS_ERRORS: readonly RedisErrorCode[] = ["WRONGTYPE"];

export function purgeDeadLettersArgs(request: PurgeDeadLettersRequest): ScriptCall {
  const { index } = deadLetterIndexKeys(request);
  return scriptCall([request.deadLetterStream, index], selectionArgv(request));
}

export function parsePurgeDeadLettersReply(reply: unknown): PurgeDeadLettersResult {
  const fields = replyFields("purgeDeadLetters", reply, 4);
  const [nextCursor, examined, deleted, done, heldBackBy, held, unknown] = fields;
  return {
    nextCursor: String(nextCursor),
    examined: Number(examined),
    deleted: Number(deleted),
    done: flag(done),
    heldBackBy: heldByList(heldBackBy),
    held: Number(held ?? 0),
    unknownIds: stringList(unknown),
  };
}

/** One page of a purge (or of a count, in a dry run). */
export async function runPurgeDeadLetters(
  redis: ScriptedRedis,
  request: PurgeDeadLettersRequest,
): Promise<PurgeDeadLettersResult> {
  return parsePurgeDeadLettersReply(
    await callScript(redis, "sjPurgeDeadLetters", purgeDeadLettersArgs(request)),
  );
}
