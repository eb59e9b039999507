import { hostname } from "node:os";
import { performance } from "node:perf_hooks";
import Redlock, { ResourceLockedError, type Lock } from "redlock";
import { companionKey } from "../core/fence.js";
import { leaseHolderOf, type LeaseHolder } from "../core/leaseHolder.js";
import { registerScripts, type ScriptedRedis } from "../scripts/scriptedRedis.js";
import { runFenceLease } from "../scripts/fenceLease.js";
import { runMoveFencingToken } from "../scripts/moveFencingToken.js";
import type { LeaseKeys } from "../scripts/leaseKeys.js";
import { type RedisClient } from "../redis/RedisClient.js";

/** Outcome of one acquire attempt. */
export type AcquireResult =
  | { readonly status: "acquired"; readonly lock: Lock; readonly fencingToken: number }
  | { readonly status: "held" };

/** redlock's clock drift allowance, as a share of the TTL (it adds 2 ms for Redis' precision). */
const DRIFT_FACTOR = 0.01;

// Where the lease keeps its token and holder record; in core, so inspect reads them without
// loading the lock library.
export { companionKey };

/**
 * The only caller of redlock (Lease, ActiveTerm keep just its Lock). redlock 5.0.0-beta.2 is used
 * through its documented API only: `acquire`, `extend`, `release`, and its "error" event to
 * tell contention (ResourceLockedError) from a Redis that did not answer. retryCount 0: its
 * retries can hand back an expired lock (#169); the Lease retries on its own cadence.
 *
 * Every acquire writes a fresh random value with SET PX only if the key is free, and never
 * refreshes a value it did not just write. So an acquire whose reply is lost (a slow link) holds
 * the key only until redlock's own release of that value lands right behind it on the same
 * connection (the release script is cached first, see cacheReleaseScript), or for one TTL if the
 * link drops in between: it can never keep the key alive.
 */
export class LeaseLock {
  readonly key: string;
  readonly tokenKey: string;
  readonly holderKey: string;
  private readonly redis: ScriptedRedis;
  private readonly ttlMs: number;
  private readonly now: () => number;
  /** Until when (monotonic ms) each lock this object handed out is valid. */
  private readonly validUntil = new WeakMap<Lock, number>();

  /** `now`: the monotonic clock (ms) lock validity is judged by; tests inject one. */
  constructor(
    redis: RedisClient,
    key: string,
    ttlMs: number,
    now: () => number = () => performance.now(),
  ) {
    this.redis = registerScripts(redis);
    this.key = key;
    this.ttlMs = ttlMs;
    this.now = now;
    this.tokenKey = companionKey(key, "token");
    this.holderKey = companionKey(key, "holder");
  }

  /**
   * One attempt: "held" when another value holds the key. Rejects when the outcome is unknown
   * (timeout, connection): redlock has then already sent a release of the value it tried.
   */
  async acquire(): Promise<AcquireResult> {
    const sentAt = this.now();
    const lock = await this.run((redlock) => {
      this.cacheReleaseScript(redlock);
      return redlock.acquire([this.key], this.ttlMs);
    });
    if (lock === undefined) return { status: "held" };
    this.validUntil.set(lock, this.deadlineFrom(sentAt));
    let token: number | undefined;
    try {
      token = await runFenceLease(this.redis, {
        keys: this.keys(),
        leaseValue: lock.value,
        host: hostname(),
        pid: process.pid,
      });
    } catch (error) {
      await this.release(lock).catch(() => undefined);
      throw error;
    }
    // None: the key expired or moved between the two calls; nothing of ours is left in it.
    return token === undefined
      ? { status: "held" }
      : { status: "acquired", lock, fencingToken: token };
  }

  /**
   * redlock releases a failed acquire with EVALSHA and sends the script's text only when it reads
   * NOSCRIPT. When that release times out as well (a slow link), a server that has not cached the
   * release script (after a restart, a failover or SCRIPT FLUSH; only failed acquires run it)
   * answers NOSCRIPT to nobody, and the tried value holds the key for a TTL. Running the release
   * script by its text on the lease key first, as a compare-and-delete of a value no lock has,
   * caches it on the node that holds the key, ahead of the acquire on the same connection.
   * Not awaited: its outcome changes nothing, and the acquire reports any failure of the link.
   */
  private cacheReleaseScript(redlock: Redlock): void {
    const { value } = redlock.scripts.releaseScript;
    this.redis.eval(value, 1, this.key, "").catch(() => undefined);
  }

  /**
   * Moves the fencing-token counter past `fenceSeen` if the key still holds `value` (one atomic
   * script, see moveFencingToken.lua): the new token, or undefined when the key does not hold
   * `value` (the lease is not ours; nothing was written). Rejects when the outcome is unknown.
   */
  async moveTokenPast(value: string, fenceSeen: number): Promise<number | undefined> {
    return runMoveFencingToken(this.redis, { keys: this.keys(), leaseValue: value, fenceSeen });
  }

  private keys(): LeaseKeys {
    return { lease: this.key, token: this.tokenKey, holder: this.holderKey };
  }

  /**
   * The lease key's value and remaining TTL in ms (-1: none, -2: no key), for standbys to notice
   * a key that nothing will ever expire.
   */
  async keyState(): Promise<{ value: string | null; pttlMs: number }> {
    const [value, pttlMs] = await Promise.all([
      this.redis.get(this.key),
      this.redis.pttl(this.key),
    ]);
    return { value, pttlMs };
  }

  /**
   * Extends the TTL if the key still holds the lock's value: the extended lock, or undefined
   * when it definitely does not (the lease is gone). Rejects when the outcome is unknown.
   */
  async extend(lock: Lock): Promise<Lock | undefined> {
    const sentAt = this.now();
    const validUntil = this.validUntil.get(lock);
    if (validUntil !== undefined && validUntil < sentAt) {
      throw new Error("Cannot extend an already-expired lock (on the monotonic clock).");
    }
    // redlock judges expiry by Date.now, so a host clock stepped forward past the TTL would make
    // a valid lock look expired: validity is judged above on the monotonic clock, and redlock's
    // wall-clock estimate is set where it cannot be passed. Redis still checks the value.
    lock.expiration = Number.MAX_SAFE_INTEGER;
    const extended = await this.run((redlock) => redlock.extend(lock, this.ttlMs));
    if (extended !== undefined) this.validUntil.set(extended, this.deadlineFrom(sentAt));
    return extended;
  }

  /** The monotonic end of a lock whose command was sent at `sentAt`, with redlock's drift. */
  private deadlineFrom(sentAt: number): number {
    return sentAt + this.ttlMs - (Math.round(DRIFT_FACTOR * this.ttlMs) + 2);
  }

  /** Compare-and-delete. Resolves false when the key did not hold the lock's value. */
  async release(lock: Lock): Promise<boolean> {
    const released = await this.run((redlock) => redlock.release(lock));
    return released !== undefined;
  }

  /** Who holds the lease now, when the holder record matches the key; undefined when free. */
  async holder(): Promise<LeaseHolder | "unknown" | undefined> {
    const [value, record] = await Promise.all([
      this.redis.get(this.key),
      this.redis.hgetall(this.holderKey),
    ]);
    return leaseHolderOf(value, record);
  }

  /**
   * Runs one redlock operation on an instance of its own, so that the "error" events it emits
   * (the documented way to see why a vote failed) belong to this operation only. Contention →
   * undefined; any other failure → the first error Redis gave, because "no answer" must not be
   * mistaken for "not ours".
   */
  private async run<T>(operation: (redlock: Redlock) => Promise<T>): Promise<T | undefined> {
    const redlock = new Redlock([this.redis], { retryCount: 0, driftFactor: DRIFT_FACTOR });
    const errors: Error[] = [];
    redlock.on("error", (error) => errors.push(error));
    try {
      return await operation(redlock);
    } catch (error) {
      const [cause] = errors;
      if (cause instanceof ResourceLockedError) return undefined;
      throw cause ?? error;
    }
  }
}
