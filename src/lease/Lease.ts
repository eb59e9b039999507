import { EventEmitter } from "node:events";
import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import type { Lock } from "redlock";
import { ActiveTerm } from "./ActiveTerm.js";
import { acquireLock, releaseQuietly } from "./acquireLock.js";
import { LeaseLock } from "./LeaseLock.js";
import type { LeaseHolder } from "../core/leaseHolder.js";
import { moveTermToken, type TokenMoveHooks } from "./moveTermToken.js";
import { OutageLog } from "./OutageLog.js";
import { StandbyReport } from "./StandbyReport.js";
import { checkLeaseTimings } from "./checkLeaseTimings.js";
import { reportLeaseMetrics } from "./reportLeaseMetrics.js";
import { realTimers, type Timers } from "../core/timers.js";
import { withJitter } from "../core/jitter.js";
import { PeriodicTask } from "../core/PeriodicTask.js";
import type { LeaderTerm, LeaseEvents, LeaseLockPort, LeaseOptions, LostReason } from "./types.js";
import type { Fence } from "../core/fence.js";

export type { LeaseOptions, LeaseHolder };

/**
 * Leader election in the style of Kubernetes client-go: standbys try to acquire every
 * retryPeriodMs (plus jitter), the leader renews every retryPeriodMs and stops acting when no
 * renewal succeeded for renewDeadlineMs. Events: "acquired"(term), "lost"(reason, term). Like
 * client-go's elector it refuses timings that break its rule (core/leaseTimingRule.ts), keeps its
 * gauges, runs on a lock it is given (a fake in tests), and its steps on a PeriodicTask.
 */
export class Lease extends EventEmitter<LeaseEvents> {
  private readonly options: LeaseOptions;
  private readonly lock: LeaseLockPort;
  private readonly log: Logger;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly timers: Timers;
  private mode: "idle" | "elect" | "hold" = "idle";
  /** One step per round: renew the term, or (standby) try to acquire; its signal is stop(). */
  private readonly loop: PeriodicTask<void>;
  /** The last acquire attempt did not win: the standby waits a jittered period before the next. */
  private lostAttempt = false;
  private attempt: Promise<ActiveTerm | undefined> | undefined;
  private stopping: Promise<void> | undefined;
  private active: ActiveTerm | undefined;
  /** Lock of a term that ended without Redis saying it was gone: release before the next try. */
  private staleLock: Lock | undefined;
  private readonly outage: OutageLog;
  private readonly standby: StandbyReport;
  private readonly tokenMoves: TokenMoveHooks;

  constructor(options: LeaseOptions) {
    super();
    checkLeaseTimings(options);
    this.options = options;
    this.lock = options.lock ?? new LeaseLock(options.redis, options.key, options.ttlMs);
    this.log = options.logger.child({ component: "lease", key: options.key });
    this.random = options.random ?? Math.random;
    this.now = options.now ?? (() => performance.now());
    this.timers = options.timers ?? realTimers;
    this.outage = new OutageLog(this.log);
    this.standby = new StandbyReport(this.lock, this.log, this.now);
    this.tokenMoves = this.tokenMoveHooks();
    if (options.metrics !== undefined) reportLeaseMetrics(this, options.metrics);
    this.loop = new PeriodicTask({
      run: () => this.step(),
      nextDelayMs: () => this.nextDelayMs(),
      // Every step handles its own errors: this is only a last resort.
      onError: (error) => this.log.error({ err: error }, "lease step failed unexpectedly"),
      timers: this.timers,
    });
  }

  get term(): LeaderTerm | undefined {
    return this.active?.view;
  }

  get isLeader(): boolean {
    return this.active !== undefined;
  }

  /** `{ key, value }` for the fence check of mutating scripts, while leader. */
  get fence(): Fence | undefined {
    return this.active?.view.fence;
  }

  /** Begins the standby/leader loop. Idempotent; a stopped Lease cannot be started again. */
  start(): void {
    if (this.loop.signal.aborted) throw new Error("Lease: start() after stop()");
    if (this.mode === "hold") throw new Error("Lease: start() after tryAcquireOnce()");
    if (this.mode === "elect") return;
    this.mode = "elect";
    this.loop.start(undefined);
    this.loop.runNow();
  }

  /**
   * One acquire attempt (for the one-shot `sweep`): the term, or undefined when another process
   * holds the lease. Rejects when Redis could not answer, so callers can tell "held" from "down".
   * A won term is renewed until stop() or its loss; after a loss nothing is retried.
   */
  async tryAcquireOnce(): Promise<LeaderTerm | undefined> {
    if (this.loop.signal.aborted) throw new Error("Lease: tryAcquireOnce() after stop()");
    if (this.mode === "elect") throw new Error("Lease: tryAcquireOnce() after start()");
    if (this.active !== undefined) return this.active.view;
    this.mode = "hold";
    this.attempt ??= this.acquireAttempt().finally(() => {
      this.attempt = undefined;
    });
    const won = await this.attempt;
    if (won !== undefined && !won.ended) {
      // Renewals from here; a step in flight schedules the next one itself when it ends.
      if (this.loop.state === "idle") this.loop.start(this.nextDelayMs());
      else if (!this.loop.busy) this.loop.reschedule(this.nextDelayMs());
    }
    return won?.view;
  }

  /** Aborts the term first (stop acting), then awaits the loop, then releases. Idempotent. */
  stop(): Promise<void> {
    this.stopping ??= this.shutdown();
    return this.stopping;
  }

  private async shutdown(): Promise<void> {
    const stepsEnded = this.loop.stop(); // aborts its signal at once
    if (this.active !== undefined) this.endTerm(this.active, "stopped");
    await stepsEnded;
    await this.attempt?.catch(() => undefined);
    await this.releaseStale();
    this.log.info("lease stopped");
  }

  /** One round of the loop: renew the term, or try to acquire; never rejects. */
  private async step(): Promise<void> {
    if (this.loop.signal.aborted) return;
    const term = this.active;
    if (term !== undefined) {
      const outcome = await term.renew(this.lock, this.outage);
      if (outcome === "taken") this.endTerm(term, "lease-taken");
      else if (outcome === "renewed") this.emitSafely("renewed", term.view);
      return;
    }
    if (this.mode === "hold") return;
    await this.releaseStale();
    const won = await this.acquireAttempt().catch((error: unknown) => {
      this.outage.failed(error, "acquire");
      return undefined;
    });
    this.lostAttempt = won === undefined;
  }

  /**
   * A leader renews retryPeriodMs after its last attempt was sent; a standby whose attempt lost
   * waits retryPeriodMs plus jitter; after a term ended the next attempt goes at once; a lost
   * term of the one-shot `sweep` is not retried.
   */
  private nextDelayMs(): number | undefined {
    const term = this.active;
    if (term !== undefined) {
      return Math.max(0, term.lastAttemptSentAt + this.options.retryPeriodMs - this.now());
    }
    if (this.mode === "hold") return undefined;
    if (!this.lostAttempt) return 0;
    this.lostAttempt = false;
    return withJitter(this.options.retryPeriodMs, this.random);
  }

  /** Who holds the lease (for `sweep`'s exit 75 and for standbys' logs); undefined when free. */
  holder(): Promise<LeaseHolder | "unknown" | undefined> {
    return this.lock.holder();
  }

  private async acquireAttempt(): Promise<ActiveTerm | undefined> {
    const acquired = await acquireLock({
      lock: this.lock,
      options: this.options,
      log: this.log,
      now: this.now,
      outage: this.outage,
      stopped: () => this.loop.signal.aborted,
      onHeld: () => (this.mode === "elect" ? this.standby.report() : Promise.resolve()),
    });
    if (acquired === undefined) return undefined;
    const { lock, fencingToken, sentAt } = acquired;
    this.standby.reset();
    const slotToken = this.options.fencePerSlot === true ? { slotToken: fencingToken } : {};
    const term = new ActiveTerm({
      fence: { key: this.options.key, value: lock.value, ...slotToken },
      lock,
      fencingToken,
      acquireSentAt: sentAt,
      renewDeadlineMs: this.options.renewDeadlineMs,
      timers: this.timers,
      now: this.now,
      onDeadline: (ended) => this.endTerm(ended, "renew-deadline"),
      moveTokenPast: (active, view, fenceSeen, context) =>
        moveTermToken(this.tokenMoves, active, view, fenceSeen, context),
    });
    this.active = term;
    this.log.info({ fencingToken }, "lease acquired");
    this.emitSafely("acquired", term.view);
    return term;
  }

  /** What LeaderTerm.moveTokenPast (moveTermToken.ts) needs of the Lease. */
  private tokenMoveHooks(): TokenMoveHooks {
    return {
      lock: this.lock,
      log: this.log,
      isActive: (candidate) => this.active === candidate,
      endTerm: (ended, reason) => this.endTerm(ended, reason),
      superseded: (before, next) => {
        // As when a term ends: a renewal waiting on its timer goes now, under the new term.
        if (this.loop.waiting) this.loop.reschedule(0);
        this.emitSafely("lost", "superseded", before);
        this.emitSafely("acquired", next);
      },
    };
  }

  private endTerm(term: ActiveTerm, reason: LostReason): void {
    if (!term.end(reason)) return;
    if (this.active === term) this.active = undefined;
    // Redis may still hold our value (slow, or we are stopping): compare-and-delete it later so a
    // standby need not wait for the TTL. After "lease-taken" the key is not ours to delete.
    if (reason !== "lease-taken") this.staleLock = term.lock;
    // A renewal waiting on its timer: the next step (release, then acquire) goes at once.
    if (this.loop.waiting) this.loop.reschedule(0);
    const fields = { reason, fencingToken: term.view.fencingToken };
    if (reason === "stopped") this.log.info(fields, "lease given up");
    else this.log.warn(fields, "lease lost");
    this.emitSafely("lost", reason, term.view);
  }

  private async releaseStale(): Promise<void> {
    const lock = this.staleLock;
    if (lock === undefined) return;
    this.staleLock = undefined;
    await releaseQuietly(this.lock, lock, this.log);
  }

  /** A listener that throws must not break the loop or the deadline timer. */
  private emitSafely<E extends keyof LeaseEvents>(event: E, ...args: LeaseEvents[E]): void {
    try {
      (this.emit as (event: E, ...args: LeaseEvents[E]) => boolean)(event, ...args);
    } catch (error) {
      this.log.error({ err: error, event }, "lease event listener threw");
    }
  }
}
