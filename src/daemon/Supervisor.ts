import type { Logger } from "pino";
import type { LeaderTerm } from "../lease/types.js";
import type { JanitorMetrics } from "../metrics/janitorMetrics.js";
import { initGroupSeries, recordSweep } from "../metrics/recordSweep.js";
import type { ScriptedRedis } from "../redis/scriptedRedis.js";
import type { GroupSweepResult } from "../sweep/GroupSweepResult.js";
import type { ResolvedGroup } from "../sweep/resolveGroup.js";
import { sweepAll } from "../sweep/sweepAll.js";

export interface SupervisorOptions {
  groups: readonly ResolvedGroup[];
  redis: ScriptedRedis;
  logger: Logger;
  metrics: JanitorMetrics;
  intervalMs: number;
  batchSize: number;
  maxScriptMs: number;
  maxEntriesPerGroup: number;
  consumerName: string;
  /** The current leadership term, or undefined on a standby. */
  currentTerm: () => LeaderTerm | undefined;
  random?: () => number;
  /** Monotonic ms for durations. */
  now?: () => number;
  /** Unix ms, for the last-success timestamp. */
  wallClock?: () => number;
}

/** Consecutive failed passes stretch the interval up to this many times. */
const MAX_BACKOFF_FACTOR = 8;

/**
 * Runs sweep passes every intervalMs (+0-20 % jitter) while this process leads. `supervise()` is
 * the pass itself, public so tests and the one-shot command call it without a timer; passes never
 * overlap, and stop() waits for the one in flight, which stops at its next page boundary.
 */
export class Supervisor {
  private readonly options: SupervisorOptions;
  private readonly log: Logger;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly wallClock: () => number;
  private readonly cursors = new Map<string, string>();
  private readonly stopController = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<GroupSweepResult[] | undefined> | undefined;
  private started = false;
  private failedPasses = 0;

  constructor(options: SupervisorOptions) {
    this.options = options;
    initGroupSeries(options.metrics, options.groups);
    this.log = options.logger.child({ component: "supervisor" });
    this.random = options.random ?? Math.random;
    this.now = options.now ?? (() => performance.now());
    this.wallClock = options.wallClock ?? Date.now;
  }

  start(): void {
    if (this.started || this.stopController.signal.aborted) return;
    this.started = true;
    this.schedule(0);
  }

  /** Sweep now (used when the lease is acquired): resets the timer so passes keep their spacing. */
  sweepSoon(): void {
    if (this.started && !this.stopController.signal.aborted) this.schedule(0);
  }

  /** True while a pass runs or one is scheduled: false after stop(), or the loop leaked. */
  get active(): boolean {
    return this.timer !== undefined || this.inFlight !== undefined;
  }

  async stop(): Promise<void> {
    this.stopController.abort();
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight;
  }

  /**
   * One pass over every group, if this process leads; resolves to undefined on a standby. A call
   * while a pass runs joins that pass instead of starting a second one.
   */
  supervise(
    term: LeaderTerm | undefined = this.options.currentTerm(),
  ): Promise<GroupSweepResult[] | undefined> {
    if (this.inFlight !== undefined) return this.inFlight;
    if (term === undefined || term.signal.aborted || this.stopController.signal.aborted) {
      return Promise.resolve(undefined);
    }
    const pass = this.runPass(term).finally(() => {
      this.inFlight = undefined;
    });
    this.inFlight = pass;
    return pass;
  }

  private async runPass(term: LeaderTerm): Promise<GroupSweepResult[]> {
    const { options } = this;
    const signal = AbortSignal.any([term.signal, this.stopController.signal]);
    const results = await sweepAll(
      options.groups,
      {
        redis: options.redis,
        logger: options.logger,
        batchSize: options.batchSize,
        maxScriptMs: options.maxScriptMs,
        maxEntriesPerGroup: options.maxEntriesPerGroup,
        consumerName: options.consumerName,
        cursors: this.cursors,
        // Always the term's fence, even after it ended: a late page is then refused by Redis.
        fence: () => term.fence,
        now: this.now,
      },
      signal,
    );
    const wallClockMs = this.wallClock();
    for (const result of results) {
      if (result.pages > 0 || result.error !== undefined || result.complete)
        recordSweep(options.metrics, result, wallClockMs);
    }
    return results;
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.tick();
    }, delayMs);
  }

  private async tick(): Promise<void> {
    try {
      const results = await this.supervise();
      const failed =
        results !== undefined && results.length > 0 && results.every((r) => r.error !== undefined);
      this.failedPasses = failed ? this.failedPasses + 1 : 0;
    } catch (error) {
      // sweepAll reports per-group failures itself; anything here is a bug, and must not stop the loop.
      this.failedPasses += 1;
      this.log.error({ err: error }, "sweep pass failed unexpectedly");
    }
    if (this.stopController.signal.aborted) return;
    const backoff = Math.min(2 ** this.failedPasses, MAX_BACKOFF_FACTOR);
    this.schedule(this.options.intervalMs * backoff * (1 + 0.2 * this.random()));
  }
}
