import { companionKey } from "../core/fence.js";
import type { RedisClient } from "../redis/RedisClient.js";

/** Who holds the lease, as its key and holder record say (the record LeaseLock writes). */
export type LeaseState =
  | { status: "free" }
  | { status: "unknown" }
  | { status: "unreadable"; error: string }
  | { status: "held"; host: string; pid: number; fencingToken: number; acquiredAtMs: number };

/** Two reads (GET of the lease key, HGETALL of its holder record), like `inspect`. */
export async function readLeaseState(redis: RedisClient, leaseKey: string): Promise<LeaseState> {
  try {
    const [value, record] = await Promise.all([
      redis.get(leaseKey),
      redis.hgetall(companionKey(leaseKey, "holder")),
    ]);
    if (value === null) return { status: "free" };
    if (record.value !== value) return { status: "unknown" };
    return {
      status: "held",
      host: record.host ?? "?",
      pid: Number(record.pid),
      fencingToken: Number(record.fencingToken),
      acquiredAtMs: Number(record.acquiredAtMs),
    };
  } catch (error) {
    return { status: "unreadable", error: error instanceof Error ? error.message : String(error) };
  }
}
