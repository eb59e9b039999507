import type { RedisErrorCode } from "../redis/redisErrors.js";
import { leaseKeyList, type LeaseKeys } from "./leaseKeys.js";
import { tokenReply } from "./scriptReplies.js";
import { callScript, scriptCall, type ScriptCall, type ScriptedRedis } from "./scriptedRedis.js";

/** The interface of src/scripts/lua/moveFencingToken.lua: the request, its arguments, its reply. */
export interface MoveFencingTokenRequest {
  keys: LeaseKeys;
  /** The lease value of the caller's term. */
  leaseValue: string;
  /** The highest token stored in a stream's fence (a non-negative integer). */
  fenceSeen: number;
}

/** ERR: the fence seen is not a non-negative integer, or the counter holds no token. */
export const MOVE_FENCING_TOKEN_ERRORS: readonly RedisErrorCode[] = ["OTHER"];

export function moveFencingTokenArgs(request: MoveFencingTokenRequest): ScriptCall {
  return scriptCall(leaseKeyList(request.keys), [request.leaseValue, request.fenceSeen]);
}

/** The new token, or undefined when the lease key does not hold the value (nothing written). */
export function parseMoveFencingTokenReply(reply: unknown): number | undefined {
  return tokenReply("the token script", reply);
}

/** Moves the token counter past the fence seen, if the lease is still the caller's. */
export async function runMoveFencingToken(
  redis: ScriptedRedis,
  request: MoveFencingTokenRequest,
): Promise<number | undefined> {
  return parseMoveFencingTokenReply(
    await callScript(redis, "sjMoveFencingToken", moveFencingTokenArgs(request)),
  );
}
