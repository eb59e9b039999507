import { leaseKeyList, type LeaseKeys } from "./leaseKeys.js";
import { tokenReply } from "./scriptReplies.js";
import { callScript, scriptCall, type ScriptCall, type ScriptedRedis } from "./scriptedRedis.js";

/**
 * The interface of src/scripts/lua/fenceLease.lua: the request, its arguments, its reply. The
 * script has no error of its own: a key that moved is the reply 0 (undefined here).
 */
export interface FenceLeaseRequest {
  keys: LeaseKeys;
  /** The value redlock just wrote to the lease key. */
  leaseValue: string;
  /** Recorded in the holder record, for `sweep`'s exit 75 and for operators. */
  host: string;
  pid: number;
}

export function fenceLeaseArgs(request: FenceLeaseRequest): ScriptCall {
  return scriptCall(leaseKeyList(request.keys), [request.leaseValue, request.host, request.pid]);
}

/** The new fencing token, or undefined when the key no longer holds the value (nothing written). */
export function parseFenceLeaseReply(reply: unknown): number | undefined {
  return tokenReply("the lease fence script", reply);
}

/** Hands out the next fencing token to the acquisition that still holds the lease key. */
export async function runFenceLease(
  redis: ScriptedRedis,
  request: FenceLeaseRequest,
): Promise<number | undefined> {
  return parseFenceLeaseReply(await callScript(redis, "sjFenceLease", fenceLeaseArgs(request)));
}
