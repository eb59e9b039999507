import { companionKey } from "../core/fence.js";
import { leaseHolderOf, type LeaseHolder } from "../core/leaseHolder.js";
import type { RedisClient } from "../redis/RedisClient.js";

/** Who holds the lease, as its key and holder record say (the record LeaseLock writes). */
export type LeaseState =
  | { status: "free" }
  | { status: "unknown" }
  | { status: "unreadable"; error: string }
  | ({ status: "held" } & LeaseHolder);

/** Two reads (GET of the lease key, HGETALL of its holder record), like `inspect`. */
export async function readLeaseState(redis: RedisClient, leaseKey: string): Promise<LeaseState> {
  try {
    const [value, record] = await Promise.all([
      redis.get(leaseKey),
      redis.hgetall(companionKey(leaseKey, "holder")),
    ]);
    const holder = leaseHolderOf(value, record);
    if (holder === undefined) return { status: "free" };
    if (holder === "unknown") return { status: "unknown" };
    return { status: "held", ...holder };
  } catch (error) {
    return { status: "unreadable", error: error instanceof Error ? error.message : String(error) };
  }
}
