import { EventEmitter } from "node:events";
import { realTimers, type Timers } from "./timers.js";

/**
 * - `idle`: built, not started (runOnce() works already);
 * - `running`: started; a round runs or the next one waits on its timer (or on reschedule());
 * - `stopping`: stop() was called; the rounds in flight are being awaited;
 * - `stopped`: final; start() and reschedule() do nothing.
 */
export type PeriodicTaskState = "idle" | "running" | "stopping" | "stopped";

/** A round of work: it should end soon once `signal` (the task's stop signal) is aborted. */
export type Round<T> = (signal: AbortSignal) => Promise<T>;

export interface PeriodicTaskOptions<T> {
  /** One round of work, handed the task's stop signal. */
  run: Round<T>;
  /** The wait before the next timed round, asked when one ends; undefined: none until reschedule(). */
  nextDelayMs: () => number | undefined;
  /** A timed round that rejected: logged by the owner; the loop goes on. */
  onError: (error: unknown) => void;
  /** realTimers unless given (backgroundTimers for work that must not keep the process alive). */
  timers?: Timers;
  /**
   * A round asked for while another runs: `join` shares the one in flight (default); `queue`
   * runs a fresh one after it (work whose input may have changed meanwhile, such as discovery).
   */
  overlap?: "join" | "queue";
}

/** What a task tells its owner and tests, so that they wait on it instead of sleeping. */
export interface PeriodicTaskEvents {
  /** A round ended (timed or runOnce()), with its error or undefined; before its callers resume. */
  "round-done": [error: unknown];
  /** The next timed round waits `delayMs`. */
  scheduled: [delayMs: number];
}

/**
 * The one loop skeleton of the daemon's periodic work (sweep passes, lease steps, PEL scans,
 * status samples, discovery), in the way of river's BaseStartStop: it owns the timer, the round
 * in flight (a round asked for meanwhile joins or queues behind it) and the stop signal handed to
 * every round; stop() aborts that signal and resolves once the rounds in flight have ended. The
 * owner keeps only its work and its wait.
 */
export class PeriodicTask<T = unknown> extends EventEmitter<PeriodicTaskEvents> {
  private readonly options: PeriodicTaskOptions<T>;
  private readonly timers: Timers;
  private readonly stopController = new AbortController();
  private currentState: PeriodicTaskState = "idle";
  private timer: unknown;
  private inFlight: Promise<T> | undefined;
  /** Settles after the last round asked for (`queue` starts the next one behind it). */
  private tail: Promise<unknown> = Promise.resolve();
  private readonly rounds = new Set<Promise<T>>();

  constructor(options: PeriodicTaskOptions<T>) {
    super();
    this.options = options;
    this.timers = options.timers ?? realTimers;
  }

  get state(): PeriodicTaskState {
    return this.currentState;
  }

  /** Aborted by stop(): handed to every round. */
  get signal(): AbortSignal {
    return this.stopController.signal;
  }

  /** True while a round runs. */
  get busy(): boolean {
    return this.rounds.size > 0;
  }

  /** True while the next round waits on a timer. */
  get waiting(): boolean {
    return this.timer !== undefined;
  }

  /**
   * idle -> running; the first round after `firstDelayMs` (undefined: the owner runs it itself,
   * then calls reschedule()). Does nothing in any other state.
   */
  start(firstDelayMs: number | undefined): void {
    if (this.currentState !== "idle") return;
    this.currentState = "running";
    this.reschedule(firstDelayMs);
  }

  /** While running: drops the pending timer and waits `delayMs` (undefined: no timer) instead. */
  reschedule(delayMs: number | undefined): void {
    if (this.currentState !== "running") return;
    this.clearTimer();
    if (delayMs === undefined) return;
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      this.runTimed();
    }, delayMs);
    this.emitSafely("scheduled", delayMs);
  }

  /** While running: drops the pending timer and starts a timed round now, synchronously. */
  runNow(): void {
    if (this.currentState !== "running") return;
    this.clearTimer();
    this.runTimed();
  }

  /**
   * A round off the timer (public owners' methods such as supervise() and scanOnce()), `work`
   * in place of the task's own if given; it starts synchronously unless it queues behind another. In `join`
   * mode a call while a round runs returns that round. Rejects to the caller, not to onError.
   */
  runOnce(work: Round<T> = this.options.run): Promise<T> {
    const queued = this.options.overlap === "queue";
    if (!queued && this.inFlight !== undefined) return this.inFlight;
    // An async function: a synchronous throw of the work becomes a rejection like any other.
    const begin = async (): Promise<T> => work(this.stopController.signal);
    const started = queued && this.rounds.size > 0 ? this.tail.then(begin) : begin();
    // Settled before the callers resume: one awaiting the round (or its event) sees it ended.
    const settle = (error: unknown): void => {
      this.rounds.delete(round);
      if (this.inFlight === round) this.inFlight = undefined;
      this.emitSafely("round-done", error);
    };
    const round: Promise<T> = started.then(
      (value) => {
        settle(undefined);
        return value;
      },
      (error: unknown) => {
        settle(error);
        throw error;
      },
    );
    this.rounds.add(round);
    this.inFlight = round;
    this.tail = round.catch(() => undefined);
    return round;
  }

  /** Resolves once no round is in flight (never rejects). */
  async settled(): Promise<void> {
    while (this.rounds.size > 0) await Promise.allSettled(this.rounds);
  }

  /** No further round; aborts the stop signal and resolves when the rounds in flight ended. */
  async stop(): Promise<void> {
    if (this.currentState === "idle" || this.currentState === "running") {
      this.currentState = "stopping";
      this.stopController.abort();
      this.clearTimer();
    }
    await this.settled();
    this.currentState = "stopped";
  }

  /** A timed round (or the one in flight, joined): its failure to onError, then the next wait. */
  private runTimed(): void {
    this.runOnce()
      .catch((error: unknown) => this.options.onError(error))
      .finally(() => this.reschedule(this.options.nextDelayMs()));
  }

  private clearTimer(): void {
    if (this.timer === undefined) return;
    this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** A listener that throws must not break a round: its error goes to onError. */
  private emitSafely<E extends keyof PeriodicTaskEvents>(
    event: E,
    ...args: PeriodicTaskEvents[E]
  ): void {
    try {
      (this.emit as (event: E, ...args: PeriodicTaskEvents[E]) => boolean)(event, ...args);
    } catch (error) {
      this.options.onError(error);
    }
  }
}
