import type { Lock } from "redlock";
import type { Timers } from "../core/timers.js";
import type { OutageLog } from "./OutageLog.js";
import { LeaseLostError, type LeaderTerm, type LeaseLockPort, type LostReason } from "./types.js";
import { type Fence } from "../core/fence.js";

export interface ActiveTermOptions {
  fence: Fence;
  /** redlock's handle on the key; replaced by each successful extension. */
  lock: Lock;
  fencingToken: number;
  /** Monotonic time at which the acquisition that started this term was sent. */
  acquireSentAt: number;
  renewDeadlineMs: number;
  timers: Timers;
  now: () => number;
  /** Called from the deadline timer; the owner ends the term (and emits "lost"). */
  onDeadline: (term: ActiveTerm) => void;
  /** Backs each view's moveTokenPast (see LeaderTerm); the view says which term it was. */
  moveTokenPast: (
    term: ActiveTerm,
    view: LeaderTerm,
    fenceSeen: number,
    context?: Record<string, unknown>,
  ) => Promise<LeaderTerm | undefined>;
}

/**
 * A term as the Lease manages it: the AbortController users see through `signal`, and the local
 * deadline timer. The deadline counts from when the last successful renewal was *sent*, not
 * answered: Redis set the TTL no earlier than that, so with ttl > renewDeadline we stop acting
 * before the key can expire, whether or not a reply is still outstanding.
 *
 * One holding of the lease may see several terms: supersede() replaces the view (a new fencing
 * token, a new signal) while the lock, the renewals and the deadline carry on unchanged.
 */
export class ActiveTerm {
  /** When the last renewal attempt (successful or not) was sent: the renew cadence counts from it. */
  lastAttemptSentAt: number;
  /** The latest Lock redlock handed back (extend returns a new one). */
  lock: Lock;
  private controller = new AbortController();
  /** What users see: read-only, so only the Lease can end the term or move its deadline. */
  private currentView: LeaderTerm;
  private readonly options: ActiveTermOptions;
  private lastSuccessSentAt: number;
  private deadlineHandle: unknown;

  constructor(options: ActiveTermOptions) {
    this.options = options;
    this.currentView = this.newView(options.fence, options.fencingToken);
    this.lock = options.lock;
    this.lastSuccessSentAt = options.acquireSentAt;
    this.lastAttemptSentAt = options.acquireSentAt;
    this.armDeadline();
  }

  /** The current term as users see it. */
  get view(): LeaderTerm {
    return this.currentView;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get value(): string {
    return this.view.fence.value;
  }

  get ended(): boolean {
    return this.controller.signal.aborted;
  }

  /** Milliseconds left before the deadline (negative once past). */
  remainingMs(): number {
    return this.lastSuccessSentAt + this.options.renewDeadlineMs - this.options.now();
  }

  /** Records a successful renewal sent at `sentAt`; moves the deadline timer accordingly. */
  renewed(sentAt: number): void {
    if (this.ended || sentAt <= this.lastSuccessSentAt) return;
    this.lastSuccessSentAt = sentAt;
    this.armDeadline();
  }

  /**
   * One renewal, sent now: `renewed` (the deadline moved), `taken` (Redis says the key is gone or
   * not ours: the owner ends the term), or `unknown` (no answer, or the term ended meanwhile: a
   * late answer cannot revive a term whose deadline passed; the deadline decides).
   */
  async renew(
    port: Pick<LeaseLockPort, "extend">,
    outage: OutageLog,
  ): Promise<"renewed" | "taken" | "unknown"> {
    if (this.ended) return "unknown";
    const sentAt = this.options.now();
    this.lastAttemptSentAt = sentAt;
    let extended: Lock | undefined;
    try {
      extended = await port.extend(this.lock);
    } catch (error) {
      // Unknown outcome: keep trying; the deadline timer decides when to give up.
      if (!this.ended) outage.failed(error, "renew", { remainingMs: this.remainingMs() });
      return "unknown";
    }
    outage.succeeded();
    if (this.ended) return "unknown";
    if (extended === undefined) return "taken";
    this.lock = extended;
    this.renewed(sentAt);
    return "renewed";
  }

  /** Aborts the signal and clears the timer. Idempotent; returns false if already ended. */
  end(reason: LostReason): boolean {
    if (this.ended) return false;
    this.options.timers.clearTimeout(this.deadlineHandle);
    this.controller.abort(new LeaseLostError(reason));
    return true;
  }

  /**
   * Ends the current view (reason `superseded`) and starts the next one with `fencingToken`,
   * keeping the lock, the lease value and the deadline. The caller has checked, in Redis, that
   * the lease still holds this term's value.
   */
  supersede(fencingToken: number): LeaderTerm {
    const { fence } = this.currentView;
    this.controller.abort(new LeaseLostError("superseded"));
    this.controller = new AbortController();
    const slotToken = fence.slotToken === undefined ? {} : { slotToken: fencingToken };
    this.currentView = this.newView(
      { key: fence.key, value: fence.value, ...slotToken },
      fencingToken,
    );
    return this.currentView;
  }

  private newView(fence: Fence, fencingToken: number): LeaderTerm {
    const view: LeaderTerm = Object.freeze({
      signal: this.controller.signal,
      fence: Object.freeze({ ...fence }),
      fencingToken,
      moveTokenPast: (fenceSeen: number, context?: Record<string, unknown>) =>
        this.options.moveTokenPast(this, view, fenceSeen, context),
    });
    return view;
  }

  private armDeadline(): void {
    this.options.timers.clearTimeout(this.deadlineHandle);
    // A reply slower than the whole deadline yields a remaining time <= 0: the timer fires at once.
    this.deadlineHandle = this.options.timers.setTimeout(
      () => {
        this.options.onDeadline(this);
      },
      Math.max(0, this.remainingMs()),
    );
  }
}
