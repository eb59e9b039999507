import Redlock, { ExecutionError, Lock, ResourceLockedError } from "redlock";
import { sameSlotKey } from "../redis/keySlot.js";
import { registerScripts, type RedisClient, type ScriptedRedis } from "../redis/scriptedRedis.js";

/** Outcome of one acquire attempt. `adopted`: Redis already held our value (an earlier reply was lost). */
export type AcquireResult =
  | { readonly status: "acquired" | "adopted"; readonly fencingToken: number }
  | { readonly status: "held" };

/**
 * Companion keys must live in the lease key's hash slot (a script touching keys of several slots
 * fails with CROSSSLOT on Redis Cluster): see sameSlotKey.
 */
export function companionKey(leaseKey: string, suffix: string): string {
  return sameSlotKey(leaseKey, suffix);
}

/**
 * The only module that knows the lock library (swap it here). Extend and release go through
 * redlock (5.0.0-beta.2, retryCount 0: its retries can hand back an expired lock, #169). Acquire
 * is our own script (scripts/acquireLease.lua) on the same connection, because redlock cannot meet two requirements:
 * `acquire()` draws the value internally and never returns it when the reply is lost, so a later
 * attempt could not recognise our own lock; and its script must return the number of keys set, so
 * it cannot INCR and return a fencing token atomically with the SET.
 */
export class LeaseLock {
  readonly key: string;
  readonly tokenKey: string;
  private readonly redis: ScriptedRedis;
  private readonly redlock: Redlock;
  private readonly ttlMs: number;

  constructor(redis: RedisClient, key: string, ttlMs: number) {
    this.redis = registerScripts(redis);
    this.key = key;
    this.ttlMs = ttlMs;
    this.tokenKey = companionKey(key, "token");
    // driftFactor is irrelevant to us: the local deadline timer, not redlock's wall-clock
    // expiration, decides when we stop acting.
    this.redlock = new Redlock([redis], { retryCount: 0, driftFactor: 0.01 });
  }

  /** One attempt. Rejects on Redis errors (timeout, connection): the outcome is then unknown. */
  async acquire(value: string): Promise<AcquireResult> {
    const keys = [this.key, this.tokenKey];
    const reply = await this.redis.sjAcquireLease(keys.length, ...keys, value, this.ttlMs);
    if (!Array.isArray(reply) || typeof reply[0] !== "number" || typeof reply[1] !== "number") {
      throw new Error(`unexpected reply to the lease acquire script: ${JSON.stringify(reply)}`);
    }
    if (reply[0] === 0) return { status: "held" };
    return { status: reply[0] === 2 ? "adopted" : "acquired", fencingToken: reply[1] };
  }

  /**
   * Extends the TTL if the key still holds `value`. Resolves false when it definitely does not
   * (the lease is gone); rejects when the outcome is unknown (Redis unreachable, timeout).
   */
  async extend(value: string): Promise<boolean> {
    try {
      await this.redlock.extend(this.lockFor(value), this.ttlMs);
      return true;
    } catch (error) {
      return notOurs(error);
    }
  }

  /** Compare-and-delete. Resolves false when the key did not hold `value`. */
  async release(value: string): Promise<boolean> {
    try {
      await this.redlock.release(this.lockFor(value));
      return true;
    } catch (error) {
      return notOurs(error);
    }
  }

  /**
   * redlock only extends or releases its own Lock objects; its expiration is a wall-clock guess
   * we do not rely on, so it is set to never block the call.
   */
  private lockFor(value: string): Lock {
    return new Lock(this.redlock, [this.key], value, [], Number.POSITIVE_INFINITY);
  }
}

/**
 * redlock reports contention and transport failures alike as a generic ExecutionError; the votes
 * inside tell them apart. Contention (ResourceLockedError) → false; anything else is rethrown with
 * the underlying cause, because "no answer" must not be mistaken for "not ours".
 */
async function notOurs(error: unknown): Promise<false> {
  if (!(error instanceof ExecutionError)) throw error;
  const causes: Error[] = [];
  for (const attempt of error.attempts) {
    const stats = await attempt;
    causes.push(...stats.votesAgainst.values());
  }
  if (causes.length > 0 && causes.every((cause) => cause instanceof ResourceLockedError)) {
    return false;
  }
  throw causes[0] ?? error;
}
