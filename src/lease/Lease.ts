import { EventEmitter } from "node:events";
import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import type { Lock } from "redlock";
import { connectionOfKey } from "../redis/connectionOfKey.js";
import { ActiveTerm } from "./ActiveTerm.js";
import { LeaseLock, type AcquireResult } from "./LeaseLock.js";
import type { LeaseHolder } from "../core/leaseHolder.js";
import { OutageLog } from "./OutageLog.js";
import { checkLeaseTimings } from "./checkLeaseTimings.js";
import { reportLeaseMetrics } from "./reportLeaseMetrics.js";
import { realTimers, type Timers } from "../core/timers.js";
import { withJitter } from "../core/jitter.js";
import { PeriodicTask } from "../core/PeriodicTask.js";
import type { LeaderTerm, LeaseEvents, LeaseLockPort, LeaseOptions, LostReason } from "./types.js";
import type { Fence } from "../core/fence.js";

export type { LeaseOptions, LeaseHolder };

/** A lease key nothing will expire stops every sweep: said at error, this often. */
const KEY_WITHOUT_TTL_LOG_INTERVAL_MS = 60_000;

/**
 * Leader election in the style of Kubernetes client-go: standbys try to acquire every
 * retryPeriodMs (plus jitter), the leader renews every retryPeriodMs and stops acting when no
 * renewal succeeded for renewDeadlineMs. Events: "acquired"(term), "lost"(reason, term). Like
 * client-go's elector it refuses timings that break its rule (core/leaseTimingRule.ts), keeps its
 * own gauges (leader, fencing token) when given them, and runs on a lock it is given (a fake one
 * in tests). Its steps run on a PeriodicTask of its own; the deadline is a timer of its own.
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
  /** The holder a standby last reported, so that it says so once per change of leader. */
  private lastHolderSeen = "";
  private readonly outage: OutageLog;
  /** When a lease key without TTL was last logged (monotonic ms); undefined while there is none. */
  private keyWithoutTtlLoggedAt: number | undefined;

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
      await this.renewStep(term);
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
    const sentAt = this.now();
    // An unknown outcome rejects; redlock has then already sent the release of the value it
    // tried, right behind it on the same connection, so nothing is left to adopt or clean up.
    const result: AcquireResult = await this.lock.acquire();
    this.outage.succeeded();
    if (result.status === "held") {
      if (this.mode === "elect") await this.reportHolder();
      return undefined;
    }
    const { lock } = result;
    if (this.loop.signal.aborted) {
      await this.releaseQuietly(lock);
      return undefined;
    }
    // Not on enough replicas yet (or WAIT failed): give the key back; the next attempt starts over.
    const replicated = await this.replicated().catch(async (error: unknown) => {
      await this.releaseQuietly(lock);
      throw error;
    });
    if (!replicated) {
      await this.releaseQuietly(lock);
      return undefined;
    }
    if (sentAt + this.options.renewDeadlineMs <= this.now()) {
      // Answered too late to act on (a slow link): give the key back for a faster replica.
      this.log.warn("lease acquired after the renew deadline; releasing it without acting");
      await this.releaseQuietly(lock);
      return undefined;
    }
    this.lastHolderSeen = "";
    const term = new ActiveTerm({
      fence: {
        key: this.options.key,
        value: lock.value,
        ...(this.options.fencePerSlot === true ? { slotToken: result.fencingToken } : {}),
      },
      lock,
      fencingToken: result.fencingToken,
      acquireSentAt: sentAt,
      renewDeadlineMs: this.options.renewDeadlineMs,
      timers: this.timers,
      now: this.now,
      onDeadline: (ended) => this.endTerm(ended, "renew-deadline"),
      moveTokenPast: (active, view, fenceSeen, context) =>
        this.moveTokenPast(active, view, fenceSeen, context),
    });
    this.active = term;
    this.log.info({ fencingToken: result.fencingToken }, "lease acquired");
    this.emitSafely("acquired", term.view);
    return term;
  }

  /**
   * See LeaderTerm.moveTokenPast. The lease value is checked by Redis in the same script that
   * moves the counter, so only the process that holds the lease can move it; this process's own
   * view must also still be the current, live one (its deadline has not passed).
   */
  private async moveTokenPast(
    term: ActiveTerm,
    view: LeaderTerm,
    fenceSeen: number,
    context: Record<string, unknown> = {},
  ): Promise<LeaderTerm | undefined> {
    const live = (): boolean => this.active === term && term.view === view && !term.ended;
    if (!live()) return undefined;
    if (fenceSeen <= view.fencingToken) return undefined;
    const token = await this.lock.moveTokenPast(term.value, fenceSeen);
    if (token === undefined) {
      // Redis says the key does not hold our value: the lease is gone, say so now.
      if (live()) this.endTerm(term, "lease-taken");
      return undefined;
    }
    // The deadline passed (or another move won) while the script ran: the counter moved, but
    // only a live term may act on it.
    if (!live()) return undefined;
    const next = term.supersede(token);
    // As when a term ends: a renewal waiting on its timer goes now, under the new term.
    if (this.loop.waiting) this.loop.reschedule(0);
    this.log.warn(
      { ...context, fencingToken: token, previousToken: view.fencingToken, fenceSeen },
      "fencing token moved past a fence left by an earlier term (the token counter went back: " +
        "a failover before it replicated, or a DEL); acting under the new token",
    );
    this.emitSafely("lost", "superseded", view);
    this.emitSafely("acquired", next);
    return next;
  }

  /**
   * A standby says at info who leads, once per change of leader; and at error, once per minute,
   * when the key has no TTL: redlock always sets one, so nothing will ever free that key.
   */
  private async reportHolder(): Promise<void> {
    await this.reportKeyWithoutTtl();
    const holder = await this.lock.holder().catch(() => "unknown" as const);
    const seen = JSON.stringify(holder ?? null);
    if (seen === this.lastHolderSeen) return;
    this.lastHolderSeen = seen;
    if (holder === undefined) return;
    if (holder === "unknown") {
      this.log.info("standing by: the lease is held by a process that left no holder record");
      return;
    }
    this.log.info(
      { leader: { host: holder.host, pid: holder.pid, fencingToken: holder.fencingToken } },
      `standing by: the lease is held by ${holder.host} (pid ${holder.pid})`,
    );
  }

  /**
   * With lease.waitReplicas, a lease that no replica has yet could vanish in a failover and be
   * acquired again by a standby while we act on it (our fenced writes would then fail, not
   * duplicate): wait until enough replicas hold it. Rejects when Redis does not answer.
   */
  private async replicated(): Promise<boolean> {
    const { waitReplicas = 0, waitTimeoutMs = 0 } = this.options;
    if (waitReplicas <= 0) return true;
    const acknowledged = Number(
      await connectionOfKey(this.options.redis, this.options.key).call(
        "WAIT",
        waitReplicas,
        waitTimeoutMs,
      ),
    );
    if (acknowledged >= waitReplicas) return true;
    this.log.warn(
      { acknowledged, waitReplicas, waitTimeoutMs },
      "lease acquired but not yet on enough replicas; not acting on it",
    );
    return false;
  }

  private async reportKeyWithoutTtl(): Promise<void> {
    // Unknown (Redis slow, or an ACL without PTTL): the holder report below says what it can.
    const state = await this.lock.keyState().catch(() => undefined);
    if (state === undefined || state.value === null || state.pttlMs !== -1) {
      this.keyWithoutTtlLoggedAt = undefined;
      return;
    }
    const now = this.now();
    const last = this.keyWithoutTtlLoggedAt;
    if (last !== undefined && now - last < KEY_WITHOUT_TTL_LOG_INTERVAL_MS) return;
    this.keyWithoutTtlLoggedAt = now;
    const shown = state.value.length > 200 ? `${state.value.slice(0, 200)}...` : state.value;
    this.log.error(
      { value: state.value, pttlMs: state.pttlMs },
      `the lease key holds ${JSON.stringify(shown)} with no TTL: no janitor can acquire it and ` +
        "nothing is swept until it is removed (check with GET and PTTL, then DEL it once sure " +
        "that no other janitor runs; see the runbook)",
    );
  }

  private async renewStep(term: ActiveTerm): Promise<void> {
    if (this.loop.signal.aborted || term.ended) return;
    const sentAt = this.now();
    term.lastAttemptSentAt = sentAt;
    let extended: Lock | undefined;
    try {
      extended = await this.lock.extend(term.lock);
    } catch (error) {
      // Unknown outcome: keep trying; the deadline timer decides when to give up.
      if (!term.ended) this.outage.failed(error, "renew", { remainingMs: term.remainingMs() });
      return;
    }
    this.outage.succeeded();
    if (term.ended) return; // a late answer cannot revive a term whose deadline passed
    if (extended === undefined) {
      this.endTerm(term, "lease-taken");
      return;
    }
    term.lock = extended;
    term.renewed(sentAt);
    this.emitSafely("renewed", term.view);
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
    await this.releaseQuietly(lock);
  }

  private async releaseQuietly(lock: Lock): Promise<void> {
    try {
      const released = await this.lock.release(lock);
      this.log.debug({ released }, "lease release");
    } catch (error) {
      this.log.debug({ err: error }, "lease release failed; the key expires by its TTL");
    }
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
