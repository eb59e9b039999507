import type { Fence } from "../core/fence.js";
import type { RedisErrorCode } from "../redis/redisErrors.js";
import { withFence } from "./scriptFence.js";
import { flag, flagArg, replyFields, ScriptReplyError, stringList } from "./scriptReplies.js";
import { callScript, scriptCall, type ScriptCall, type ScriptedRedis } from "./scriptedRedis.js";

/** The interface of src/scripts/lua/safeTrim.lua: the request, its arguments, its reply. */
export interface SafeTrimRequest {
  stream: string;
  /** Keep at most this many entries; undefined: no limit. */
  maxLen: number | undefined;
  /** Remove entries older than this on the Redis clock; undefined: no limit. */
  maxAgeMs: number | undefined;
  /** At most this many entries are looked at (and removed) by the call. */
  pageSize: number;
  dryRun: boolean;
  /** Dry run only: entries counted by the earlier calls of the same dry run. */
  countedBefore: number;
  /** Dry run only: the page starts after this id; undefined: at the head of the stream. */
  after: string | undefined;
  /** Undefined: unfenced (an operator's command). */
  fence: Fence | undefined;
}

/** A group that held the policy back. */
export interface TrimBlocker {
  group: string;
  /** The oldest id this group still needs (its oldest pending, or its first undelivered). */
  neededFromId: string;
}

export interface SafeTrimResult {
  /** Entries removed (in a dry run: that would be). */
  removed: number;
  /** Entries of this page the policy wanted removed (removed < wanted: held back). */
  wanted: number;
  /** The last id removed, "" when none (a dry run's next page starts after it). */
  lastRemovedId: string;
  /** The oldest id some group needs, "" when no group needs anything. */
  floorId: string;
  /** The groups that held the policy back. */
  blockedBy: TrimBlocker[];
  /** The policy may want more beyond this page: call again. */
  more: boolean;
}

/** The script's errors; nothing changed on any of them. */
export const SAFE_TRIM_ERRORS: readonly RedisErrorCode[] = ["FENCED", "WRONGTYPE"];

/** The script's "no limit": -1 for the length (0 is a limit), 0 for the age. */
const NO_MAX_LEN = -1;
const NO_MAX_AGE = 0;

export function safeTrimArgs(request: SafeTrimRequest): ScriptCall {
  const { keys, fenceValue } = withFence([request.stream], request.fence, request.stream);
  return scriptCall(keys, [
    request.maxLen ?? NO_MAX_LEN,
    request.maxAgeMs ?? NO_MAX_AGE,
    request.pageSize,
    flagArg(request.dryRun),
    fenceValue,
    request.dryRun ? request.countedBefore : 0,
    (request.dryRun ? request.after : undefined) ?? "-",
  ]);
}

export function parseSafeTrimReply(reply: unknown): SafeTrimResult {
  const [removed, wanted, lastRemovedId, floorId, blockers, more] = replyFields(
    "safeTrim",
    reply,
    6,
  );
  if (!Array.isArray(blockers)) {
    throw new ScriptReplyError(`unexpected safeTrim reply: ${JSON.stringify(reply)}`);
  }
  const flat = stringList(blockers);
  const blockedBy: TrimBlocker[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    blockedBy.push({ group: flat[i] ?? "", neededFromId: flat[i + 1] ?? "" });
  }
  return {
    removed: Number(removed),
    wanted: Number(wanted),
    lastRemovedId: String(lastRemovedId),
    floorId: String(floorId),
    blockedBy,
    more: flag(more),
  };
}

/** One page of a trim: the floor and the trim in one atomic step. */
export async function runSafeTrim(
  redis: ScriptedRedis,
  request: SafeTrimRequest,
): Promise<SafeTrimResult> {
  return parseSafeTrimReply(await callScript(redis, "sjSafeTrim", safeTrimArgs(request)));
}
