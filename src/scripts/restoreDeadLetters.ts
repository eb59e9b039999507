import { deadLetterIndexKeys } from "../core/deadLetterIndex.js";
import { sameSlotKey } from "../core/keySlot.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { RedisErrorCode } from "../redis/redisErrors.js";
import { flagArg, integerReply, replyFields } from "./scriptReplies.js";
import { callScript, scriptCall, type ScriptArg, type ScriptedRedis } from "./scriptedRedis.js";

/** A saved dead letter: its id in the dead-letter stream, and every field as bytes, in order. */
export interface SavedDeadLetter {
  id: string;
  /** Names and values alternating, as saved (metadata included). */
  values: Buffer[];
}

/**
 * The interface of src/scripts/lua/restoreDeadLetters.lua. Not fenced: an operator runs it, as
 * `dlq redrive` (see the script's header).
 */
export interface RestoreDeadLettersRequest {
  group: Pick<ResolvedGroup, "stream" | "group" | "deadLetterStream">;
  /** Where the copies go: the group's requeueStream, the source stream, or its retry lane. */
  target: string;
  batch: readonly SavedDeadLetter[];
  dryRun: boolean;
  /** How long the restored ids are remembered, ms. */
  retentionMs: number;
}

export interface RestoreDeadLettersResult {
  /** Written (in a dry run: that would be). */
  restored: number;
  /** Skipped: restored before. */
  already: number;
}

/**
 * The ids restored for a group, beside its dead-letter index (so in its dead-letter stream's
 * slot, which the slot rule keeps the source's and the target's).
 */
export function restoredKey(group: RestoreDeadLettersRequest["group"]): string {
  return sameSlotKey(deadLetterIndexKeys(group).index, "restored");
}

/** The script's errors, nothing changed (IDSEXHAUSTED: the target cannot take the batch). */
export const RESTORE_DEAD_LETTERS_ERRORS: readonly RedisErrorCode[] = ["WRONGTYPE", "IDSEXHAUSTED"];

/** The ARGV values one saved dead letter takes: what a batch is measured in. */
export function argvSize(letter: SavedDeadLetter): number {
  return 2 + letter.values.length;
}

function restoreDeadLettersArgs(request: RestoreDeadLettersRequest) {
  const argv: ScriptArg[] = [flagArg(request.dryRun), request.retentionMs];
  for (const letter of request.batch) argv.push(letter.id, letter.values.length, ...letter.values);
  return scriptCall([request.target, restoredKey(request.group)], argv);
}

function parseRestoreDeadLettersReply(reply: unknown): RestoreDeadLettersResult {
  const [restored, already] = replyFields("restoreDeadLetters", reply, 2);
  return {
    restored: integerReply("restoreDeadLetters", restored),
    already: integerReply("restoreDeadLetters", already),
  };
}

/** One batch: each saved dead letter not restored before is copied to the target, atomically. */
export async function runRestoreDeadLetters(
  redis: ScriptedRedis,
  request: RestoreDeadLettersRequest,
): Promise<RestoreDeadLettersResult> {
  return parseRestoreDeadLettersReply(
    await callScript(redis, "sjRestoreDeadLetters", restoreDeadLettersArgs(request)),
  );
}
