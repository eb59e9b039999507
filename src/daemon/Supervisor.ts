import { EventEmitter } from "node:events";
import type { Logger } from "pino";
import type { LeaderTerm } from "../lease/types.js";
import type { GroupSweepResult } from "../sweep/GroupSweepResult.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { sweepAll } from "../sweep/sweepAll.js";
import { redisNowMs } from "../redis/redisNowMs.js";
import { staticGroups, type GroupChange, type GroupSource } from "../core/GroupSet.js";
import { withJitter } from "../core/jitter.js";
import { PeriodicTask } from "../core/PeriodicTask.js";
import { sweepChangedGroup } from "./recordSweep.js";
import { MAX_TOKEN_MOVES_PER_PASS, moveTokenPast } from "./tokenMoves.js";
import type { SupervisorEvents } from "./SupervisorEvents.js";
import type { SupervisorOptions, SweepSettings } from "./SupervisorOptions.js";

/** Consecutive failed passes stretch the interval up to this many times. */
const MAX_BACKOFF_FACTOR = 8;

/**
 * Runs sweep passes every intervalMs (plus jitter) while this process leads. `supervise()` is
 * the pass itself, public so tests and the one-shot command call it without a timer; passes never
 * overlap, and stop() waits for the one in flight, which stops at its next page boundary. What a
 * pass did is told through typed events (SupervisorEvents), which metrics subscribe to.
 */
export class Supervisor extends EventEmitter<SupervisorEvents> {
  private readonly options: SupervisorOptions;
  private readonly groups: GroupSource;
  private settings: SweepSettings;
  private readonly log: Logger;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly cursors = new Map<string, string>();
  /** Its passes, timed or asked for (supervise()): one at a time, stopped together. */
  private readonly loop: PeriodicTask<GroupSweepResult[] | undefined>;
  private failedPasses = 0;

  constructor(options: SupervisorOptions) {
    super();
    this.options = options;
    this.groups = Array.isArray(options.groups)
      ? staticGroups(options.groups as readonly ResolvedGroup[])
      : (options.groups as GroupSource);
    this.settings = {
      intervalMs: options.intervalMs,
      batchSize: options.batchSize,
      maxScriptMs: options.maxScriptMs,
      maxEntriesPerGroup: options.maxEntriesPerGroup,
      consumerName: options.consumerName,
    };
    this.log = options.logger.child({ component: "supervisor" });
    options.maintenance?.initGroups(this.groups.current());
    this.groups.on("change", this.onGroupsChanged);
    this.random = options.random ?? Math.random;
    this.now = options.now ?? (() => performance.now());
    this.loop = new PeriodicTask({
      run: () => this.pass(this.options.currentTerm()),
      nextDelayMs: () => this.nextDelayMs(),
      // sweepAll reports per-group failures itself; anything here is a bug, and must not stop the loop.
      onError: (error) => this.log.error({ err: error }, "sweep pass failed unexpectedly"),
      ...(options.timers === undefined ? {} : { timers: options.timers }),
    });
  }

  /** The groups the next pass sweeps. */
  currentGroups(): readonly ResolvedGroup[] {
    return this.groups.current();
  }

  start(): void {
    this.loop.start(0);
  }

  /** Sweep now (used when the lease is acquired): resets the timer so passes keep their spacing. */
  sweepSoon(): void {
    this.loop.reschedule(0);
  }

  /** True while a pass runs or one is scheduled: false after stop(), or the loop leaked. */
  get active(): boolean {
    return this.loop.waiting || this.loop.busy;
  }

  /** New sweep settings (a reload): the next page and the next pass use them. */
  updateSettings(settings: SweepSettings): void {
    const intervalChanged = settings.intervalMs !== this.settings.intervalMs;
    this.settings = { ...settings };
    // A pass waiting out a long old interval would otherwise keep it once more.
    if (intervalChanged && this.loop.waiting) this.loop.reschedule(this.nextDelayMs());
  }

  async stop(): Promise<void> {
    this.groups.off("change", this.onGroupsChanged);
    await this.loop.stop();
  }

  /**
   * One pass over every group, if this process leads; resolves to undefined on a standby. A call
   * while a pass runs joins that pass instead of starting a second one.
   */
  supervise(
    term: LeaderTerm | undefined = this.options.currentTerm(),
  ): Promise<GroupSweepResult[] | undefined> {
    return this.loop.runOnce(() => this.pass(term));
  }

  /** A pass under `term` (none on a standby); consecutive failed passes back the interval off. */
  private async pass(term: LeaderTerm | undefined): Promise<GroupSweepResult[] | undefined> {
    if (term === undefined || term.signal.aborted || this.loop.signal.aborted) return undefined;
    let results: GroupSweepResult[];
    try {
      results = await this.runPass(term);
    } catch (error) {
      this.failedPasses += 1;
      throw error;
    }
    const failed = results.length > 0 && results.every((r) => r.error !== undefined);
    this.failedPasses = failed ? this.failedPasses + 1 : 0;
    return results;
  }

  private async runPass(term: LeaderTerm): Promise<GroupSweepResult[]> {
    const { options } = this;
    const groups = this.groups.current();
    let current = term;
    let results = await this.sweepGroups(groups, current);
    for (let moves = 0; moves < MAX_TOKEN_MOVES_PER_PASS; moves += 1) {
      // Redis Cluster: a stream's fence above our token. Only the holder of the lease can move
      // the token past it (checked in Redis); then the refused group and those the refusal
      // skipped are swept again under the new term. A refused page changed nothing.
      const refused = results.findIndex((result) => result.fenceSeen !== undefined);
      const at = results[refused];
      if (at?.fenceSeen === undefined) break;
      const where = { stream: at.stream, group: at.group };
      const next = await moveTokenPast(current, at.fenceSeen, where, this.log);
      if (next === undefined) break;
      current = next;
      results = [
        ...results.slice(0, refused),
        ...(await this.sweepGroups(groups.slice(refused), current)),
      ];
    }
    // The host's clock, for the console's ages only. Redis TIME, read once per pass, stamps the
    // last success like every other timestamp, so a host clock off by minutes neither fires nor
    // hides the no-recent-sweep alert; when Redis does not answer TIME, the host clock stands in.
    const wallClockMs = Date.now();
    const redisClockMs = await redisNowMs(this.options.redis).catch(() => wallClockMs);
    // A group removed while the pass ran keeps no series: its counters must not come back.
    const stillThere = new Set(this.groups.current().map((group) => group.id));
    for (const result of results) {
      const groupId = `${result.stream}/${result.group}`;
      if (!stillThere.has(groupId)) continue;
      if (result.error !== undefined)
        this.emitSafely("group-failed", result, wallClockMs, redisClockMs);
      else if (result.pages > 0 || result.complete)
        this.emitSafely("group-swept", result, wallClockMs, redisClockMs);
      if (sweepChangedGroup(result)) this.emitSafely("group-changed", groupId);
    }
    const { maintenance } = options;
    if (maintenance === undefined) {
      this.emitSafely("pass-finished", results);
      return results;
    }
    const maintain = (under: LeaderTerm) =>
      maintenance.run(this.groups.current(), results, under.fence, this.passSignal(under));
    let refused = await maintain(current);
    for (let moves = 0; refused !== undefined && moves < MAX_TOKEN_MOVES_PER_PASS; moves += 1) {
      // The same as above for a stream only maintenance writes to (a retention stream, say).
      const where = { stream: refused.stream };
      const next = await moveTokenPast(current, refused.fenceSeen, where, this.log);
      if (next === undefined) break;
      current = next;
      refused = await maintain(current);
    }
    this.emitSafely("pass-finished", results);
    return results;
  }

  private sweepGroups(
    groups: readonly ResolvedGroup[],
    term: LeaderTerm,
  ): Promise<GroupSweepResult[]> {
    const { options } = this;
    const { batchSize, maxScriptMs, maxEntriesPerGroup, consumerName } = this.settings;
    return sweepAll(
      groups,
      {
        redis: options.redis,
        logger: options.logger,
        batchSize,
        maxScriptMs,
        maxEntriesPerGroup,
        janitorConsumer: consumerName,
        cursors: this.cursors,
        // Always the term's fence, even after it ended: a late page is then refused by Redis.
        fence: () => term.fence,
        now: this.now,
      },
      this.passSignal(term),
    );
  }

  private passSignal(term: LeaderTerm): AbortSignal {
    return AbortSignal.any([term.signal, this.loop.signal]);
  }

  private nextDelayMs(): number {
    const backoff = Math.min(2 ** this.failedPasses, MAX_BACKOFF_FACTOR);
    return withJitter(this.settings.intervalMs * backoff, this.random);
  }

  /** Removed groups lose their cursor; subscribers hear of the change (counters, series). */
  private readonly onGroupsChanged = (change: GroupChange): void => {
    this.options.maintenance?.initGroups([...change.added, ...change.updated]);
    for (const group of change.removed) this.cursors.delete(group.id);
    this.emitSafely("groups-changed", change);
  };

  /** A listener that throws must not break a pass. */
  private emitSafely<E extends keyof SupervisorEvents>(
    event: E,
    ...args: SupervisorEvents[E]
  ): void {
    try {
      (this.emit as (event: E, ...args: SupervisorEvents[E]) => boolean)(event, ...args);
    } catch (error) {
      this.log.error({ err: error, event }, "supervisor event listener threw");
    }
  }
}
