import { realTimers, type Timers } from "./timers.js";

/**
 * - `idle`: built, not started;
 * - `running`: started; a round runs or the next one waits on its timer (or on reschedule());
 * - `stopping`: stop() was called; the round in flight is being awaited;
 * - `stopped`: final; start() and reschedule() do nothing.
 */
export type PeriodicTaskState = "idle" | "running" | "stopping" | "stopped";

export interface PeriodicTaskOptions {
  /**
   * One round of work. Public elsewhere (supervise(), scanOnce(), discoverOnce()) so tests call
   * it without a timer; a round started while another runs is the work's concern (it joins or
   * queues), as it would be for a direct call.
   */
  run: () => Promise<unknown>;
  /** The wait before the next round, asked when a round ends; undefined: none until reschedule(). */
  nextDelayMs: () => number | undefined;
  /** A rejected round: logged by the owner; the loop goes on. */
  onError: (error: unknown) => void;
  /** realTimers unless given (backgroundTimers for work that must not keep the process alive). */
  timers?: Timers;
}

/**
 * The one timer loop of the daemon's periodic work (sweep passes, PEL scans, discovery): a round,
 * then the wait its owner asks for, then the next round, until stop(). The work stays apart from
 * the timer, the way pg-boss keeps supervise() apart from its interval.
 */
export class PeriodicTask {
  private readonly options: PeriodicTaskOptions;
  private readonly timers: Timers;
  private currentState: PeriodicTaskState = "idle";
  private timer: unknown;
  private readonly rounds = new Set<Promise<unknown>>();

  constructor(options: PeriodicTaskOptions) {
    this.options = options;
    this.timers = options.timers ?? realTimers;
  }

  get state(): PeriodicTaskState {
    return this.currentState;
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
      this.runRound();
    }, delayMs);
  }

  /** While running: drops the pending timer and starts a round now, synchronously. */
  runNow(): void {
    if (this.currentState !== "running") return;
    this.clearTimer();
    this.runRound();
  }

  /** No further round; resolves when the rounds in flight have ended. Idempotent. */
  async stop(): Promise<void> {
    if (this.currentState === "idle" || this.currentState === "running") {
      this.currentState = "stopping";
      this.clearTimer();
    }
    while (this.rounds.size > 0) await Promise.all(this.rounds);
    this.currentState = "stopped";
  }

  /** The round starts synchronously (tests that fire a timer rely on it). */
  private runRound(): void {
    // An async function: a synchronous throw of run() becomes a rejection like any other.
    const work = async (): Promise<unknown> => this.options.run();
    const round = work()
      .catch((error: unknown) => this.options.onError(error))
      .finally(() => {
        this.rounds.delete(round);
        this.reschedule(this.options.nextDelayMs());
      });
    this.rounds.add(round);
  }

  private clearTimer(): void {
    if (this.timer === undefined) return;
    this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
