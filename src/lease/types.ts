import type { Fence } from "../core/fence.js";
import type { RedisClient } from "../redis/RedisClient.js";
import type { Logger } from "pino";
import type { Timers } from "../core/timers.js";
import type { LeaseLock } from "./LeaseLock.js";
import type { JanitorMetrics } from "../metrics/janitorMetrics.js";

/** The lease's own series, defined with the others in metrics/janitorMetrics.ts. */
export type LeaseMetrics = Pick<JanitorMetrics, "leader" | "fencingToken" | "fencingTokenMoves">;

export interface LeaseOptions {
  /** A connection of its own, with a short commandTimeout: renewals must not queue behind sweeps. */
  redis: RedisClient;
  key: string;
  /** ttlMs > renewDeadlineMs > 1.2 * retryPeriodMs: the constructor refuses other timings. */
  ttlMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  logger: Logger;
  /**
   * > 0: after acquiring, `WAIT waitReplicas waitTimeoutMs` and act only once that many replicas
   * hold the lease (see README, Sentinel). Off (0) by default.
   */
  waitReplicas?: number;
  waitTimeoutMs?: number;
  /** Redis Cluster: fence per hash slot with the fencing token (see Fence). */
  fencePerSlot?: boolean;
  /** Jitter source, [0, 1). */
  random?: () => number;
  /** Monotonic clock in ms; performance.now() unless a test injects one. */
  now?: () => number;
  timers?: Timers;
  /**
   * The lock the lease runs on, like client-go's resourcelock: a LeaseLock on `redis` unless given
   * (tests give a fake one, and drive the lease with fake timers).
   */
  lock?: LeaseLockPort;
  /** Set by the lease itself: 1 while leading, the current term's token, token moves. */
  metrics?: LeaseMetrics;
}

/** What the Lease uses of its lock. */
export type LeaseLockPort = Pick<
  LeaseLock,
  "acquire" | "extend" | "release" | "holder" | "keyState" | "moveTokenPast"
>;

/** One term of leadership: act only while `signal` is not aborted. */
export interface LeaderTerm {
  /** Aborted (with a LeaseLostError) the moment this process must stop acting as leader. */
  readonly signal: AbortSignal;
  readonly fence: Fence;
  /** Increases with every acquisition of the lease, whoever acquires it. */
  readonly fencingToken: number;
  /**
   * Redis Cluster: a stream's fence holds `fenceSeen`, above this term's token (the counter
   * went back: a failover before it replicated, or a DEL). Moves the counter past it if Redis
   * confirms, atomically, that the lease still holds this term's value, and starts a new term
   * with that token (this one ends, reason `superseded`). Undefined when this term is over, when
   * `fenceSeen` is not above its token, or when the lease is not ours (then this term ends,
   * `lease-taken`). Rejects when Redis did not answer.
   * Set on the Lease's own terms only.
   */
  readonly moveTokenPast?: (
    fenceSeen: number,
    context?: Record<string, unknown>,
  ) => Promise<LeaderTerm | undefined>;
}

/**
 * - `renew-deadline`: no renewal succeeded for renewDeadlineMs (Redis slow or unreachable);
 * - `lease-taken`: a renewal found the key gone or holding another value;
 * - `stopped`: stop() was called;
 * - `superseded`: the lease is still held, but a new term with a higher fencing token replaced
 *   this one (moveTokenPast); "acquired" follows at once with the new term.
 */
export type LostReason = "renew-deadline" | "lease-taken" | "stopped" | "superseded";

export class LeaseLostError extends Error {
  readonly reason: LostReason;
  constructor(reason: LostReason) {
    super(`lease lost: ${reason}`);
    this.name = "LeaseLostError";
    this.reason = reason;
  }
}

/** Typed events of a Lease. */
export interface LeaseEvents {
  acquired: [term: LeaderTerm];
  /** A renewal succeeded (the deadline moved). */
  renewed: [term: LeaderTerm];
  lost: [reason: LostReason, term: LeaderTerm];
}
