import type { Lock } from "redlock";
import type { Timers } from "./timers.js";
import { LeaseLostError, type Fence, type LeaderTerm, type LostReason } from "./types.js";

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
}

/**
 * A term as the Lease manages it: the AbortController users see through `signal`, and the local
 * deadline timer. The deadline counts from when the last successful renewal was *sent*, not
 * answered: Redis set the TTL no earlier than that, so with ttl > renewDeadline we stop acting
 * before the key can expire, whether or not a reply is still outstanding.
 */
export class ActiveTerm {
  /** What users see: read-only, so only the Lease can end the term or move its deadline. */
  readonly view: LeaderTerm;
  /** When the last renewal attempt (successful or not) was sent: the renew cadence counts from it. */
  lastAttemptSentAt: number;
  /** The latest Lock redlock handed back (extend returns a new one). */
  lock: Lock;
  private readonly controller = new AbortController();
  private readonly options: ActiveTermOptions;
  private lastSuccessSentAt: number;
  private deadlineHandle: unknown;

  constructor(options: ActiveTermOptions) {
    this.options = options;
    this.view = Object.freeze({
      signal: this.controller.signal,
      fence: Object.freeze({ ...options.fence }),
      fencingToken: options.fencingToken,
    });
    this.lock = options.lock;
    this.lastSuccessSentAt = options.acquireSentAt;
    this.lastAttemptSentAt = options.acquireSentAt;
    this.armDeadline();
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

  /** Aborts the signal and clears the timer. Idempotent; returns false if already ended. */
  end(reason: LostReason): boolean {
    if (this.ended) return false;
    this.options.timers.clearTimeout(this.deadlineHandle);
    this.controller.abort(new LeaseLostError(reason));
    return true;
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
