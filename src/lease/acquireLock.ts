import type { Logger } from "pino";
import type { Lock } from "redlock";
import { connectionOfKey } from "../redis/connectionOfKey.js";
import type { AcquireResult } from "./LeaseLock.js";
import type { OutageLog } from "./OutageLog.js";
import type { LeaseLockPort, LeaseOptions } from "./types.js";

/** What one acquire attempt of the Lease uses. */
export interface AcquireContext {
  lock: LeaseLockPort;
  options: LeaseOptions;
  log: Logger;
  now: () => number;
  outage: OutageLog;
  /** True once the Lease is stopping: a key won meanwhile is given back. */
  stopped: () => boolean;
  /** Another process holds the lease. */
  onHeld: () => Promise<void>;
}

/** A won lock, fit to act on: replicated as asked, and answered within the renew deadline. */
export interface AcquiredLock {
  lock: Lock;
  fencingToken: number;
  /** Monotonic time at which the attempt was sent: the term's deadline counts from it. */
  sentAt: number;
}

/**
 * One acquire attempt: the lock, or undefined when another process holds the lease or the won
 * key was given back (stopping, too few replicas, answered too late). Rejects when Redis could
 * not answer.
 */
export async function acquireLock(context: AcquireContext): Promise<AcquiredLock | undefined> {
  const { options, log } = context;
  const sentAt = context.now();
  // An unknown outcome rejects; redlock has then already sent the release of the value it
  // tried, right behind it on the same connection, so nothing is left to adopt or clean up.
  const result: AcquireResult = await context.lock.acquire();
  context.outage.succeeded();
  if (result.status === "held") {
    await context.onHeld();
    return undefined;
  }
  const { lock } = result;
  const giveBack = async (): Promise<undefined> => {
    await releaseQuietly(context.lock, lock, log);
    return undefined;
  };
  if (context.stopped()) return giveBack();
  // Not on enough replicas yet (or WAIT failed): give the key back; the next attempt starts over.
  const isReplicated = await replicated(options, log).catch(async (error: unknown) => {
    await giveBack();
    throw error;
  });
  if (!isReplicated) return giveBack();
  if (sentAt + options.renewDeadlineMs <= context.now()) {
    // Answered too late to act on (a slow link): give the key back for a faster replica.
    log.warn("lease acquired after the renew deadline; releasing it without acting");
    return giveBack();
  }
  return { lock, fencingToken: result.fencingToken, sentAt };
}

/**
 * With lease.waitReplicas, a lease that no replica has yet could vanish in a failover and be
 * acquired again by a standby while we act on it (our fenced writes would then fail, not
 * duplicate): wait until enough replicas hold it. Rejects when Redis does not answer.
 */
async function replicated(options: LeaseOptions, log: Logger): Promise<boolean> {
  const { waitReplicas = 0, waitTimeoutMs = 0 } = options;
  if (waitReplicas <= 0) return true;
  const acknowledged = Number(
    await connectionOfKey(options.redis, options.key).call("WAIT", waitReplicas, waitTimeoutMs),
  );
  if (acknowledged >= waitReplicas) return true;
  log.warn(
    { acknowledged, waitReplicas, waitTimeoutMs },
    "lease acquired but not yet on enough replicas; not acting on it",
  );
  return false;
}

/** Compare-and-delete of our value; a failure leaves the key to its TTL. */
export async function releaseQuietly(
  port: Pick<LeaseLockPort, "release">,
  lock: Lock,
  log: Logger,
): Promise<void> {
  try {
    const released = await port.release(lock);
    log.debug({ released }, "lease release");
  } catch (error) {
    log.debug({ err: error }, "lease release failed; the key expires by its TTL");
  }
}
