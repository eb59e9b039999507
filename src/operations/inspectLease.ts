import { companionKey } from "../core/fence.js";
import { leaseHolderOf, UNKNOWN_HOST } from "../core/leaseHolder.js";
import type { Command, PipelineReply } from "../redis/pipeline/runPipeline.js";

export interface LeaseInspection {
  key: string;
  held: boolean;
  /** From the lease value, `host/pid/random`. */
  holderHost?: string;
  holderPid?: number;
  /** The fencing counter: the token of the current (or last) term. */
  fencingToken: number | null;
  /** PTTL of the lease key, ms. */
  timeLeftMs?: number;
}

/** The reads of the lease for inspect: its value, its PTTL, the fencing token, the holder record. */
export function leaseCommands(leaseKey: string): Command[] {
  return [
    ["GET", leaseKey],
    ["PTTL", leaseKey],
    ["GET", companionKey(leaseKey, "token")],
    ["HGETALL", companionKey(leaseKey, "holder")],
  ];
}

/** The lease as the replies of leaseCommands() (the first four of `replies`) describe it. */
export function leaseInspection(
  leaseKey: string,
  replies: readonly (PipelineReply | undefined)[],
): LeaseInspection {
  const [value, ttl, token] = [0, 1, 2].map((index) => replies[index]?.value);
  const holder = leaseHolderOf(value, replies[3]?.value);
  const lease: LeaseInspection = {
    key: leaseKey,
    held: typeof value === "string",
    fencingToken: token === null || token === undefined ? null : Number(token),
  };
  if (typeof holder === "object") {
    if (holder.host !== UNKNOWN_HOST) lease.holderHost = holder.host;
    if (!Number.isNaN(holder.pid)) lease.holderPid = holder.pid;
  }
  if (typeof value === "string" && Number(ttl) >= 0) lease.timeLeftMs = Number(ttl);
  return lease;
}
