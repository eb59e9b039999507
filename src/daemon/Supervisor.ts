import type { Logger } from "pino";
import type { LeaderTerm } from "../lease/types.js";
import type { JanitorMetrics } from "../metrics/janitorMetrics.js";
import { initGroupSeries, recordSweep, sweepChangedGroup } from "./recordSweep.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import type { GroupSweepResult } from "../sweep/GroupSweepResult.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { sweepAll } from "../sweep/sweepAll.js";
import { forgetGroupSeries } from "../metrics/forgetGroupSeries.js";
import { staticGroups, type GroupChange, type GroupSource } from "../core/GroupSet.js";
import type { Maintenance } from "../maintenance/Maintenance.js";

/** The sweep settings a reload may change while the daemon runs. */
export interface SweepSettings {
  intervalMs: number;
  batchSize: number;
  maxScriptMs: number;
  maxEntriesPerGroup: number;
  consumerName: string;
}

export interface SupervisorOptions extends SweepSettings {
  /** A fixed list, or a source whose changes (reload, discovery) are picked up at the next pass. */
  groups: readonly ResolvedGroup[] | GroupSource;
  redis: ScriptedRedis;
  logger: Logger;
  metrics: JanitorMetrics;
  /** The current leadership term, or undefined on a standby. */
  currentTerm: () => LeaderTerm | undefined;
  /** Reaping and retention, run after each pass under the same fence. */
  maintenance?: Maintenance;
  random?: () => number;
  /** Monotonic ms for durations. */
  now?: () => number;
  /** Unix ms, for the last-success timestamp. */
  wallClock?: () => number;
  /** Told about each group a sweep changed, so the gauges derived from its PEL are refreshed. */
  onGroupChanged?: (groupId: string) => void;
}

/**
 * Token moves one pass may make (each past a higher fence than the last): enough for fences left
 * by several forgotten terms, bounded so that a pass always ends.
 */
const MAX_TOKEN_MOVES_PER_PASS = 8;

/** Consecutive failed passes stretch the interval up to this many times. */
const MAX_BACKOFF_FACTOR = 8;

/**
 * Runs sweep passes every intervalMs (+0-20 % jitter) while this process leads. `supervise()` is
 * the pass itself, public so tests and the one-shot command call it without a timer; passes never
 * overlap, and stop() waits for the one in flight, which stops at its next page boundary.
 */
export class Supervisor {
  private readonly options: SupervisorOptions;
  private readonly groups: GroupSource;
  private settings: SweepSettings;
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
    initGroupSeries(options.metrics, this.groups.current());
    options.maintenance?.initGroups(this.groups.current());
    this.groups.on("change", this.onGroupsChanged);
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

  /** New sweep settings (a reload): the next page and the next pass use them. */
  updateSettings(settings: SweepSettings): void {
    const intervalChanged = settings.intervalMs !== this.settings.intervalMs;
    this.settings = { ...settings };
    // A pass waiting out a long old interval would otherwise keep it once more.
    if (intervalChanged && this.timer !== undefined) this.schedule(this.nextDelayMs());
  }

  async stop(): Promise<void> {
    this.groups.off("change", this.onGroupsChanged);
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
      const next = await this.moveTokenPast(current, at.fenceSeen, {
        stream: at.stream,
        group: at.group,
      });
      if (next === undefined) break;
      current = next;
      results = [
        ...results.slice(0, refused),
        ...(await this.sweepGroups(groups.slice(refused), current)),
      ];
    }
    const wallClockMs = this.wallClock();
    // A group removed while the pass ran keeps no series: its counters must not come back.
    const stillThere = new Set(this.groups.current().map((group) => group.id));
    for (const result of results) {
      const groupId = `${result.stream}/${result.group}`;
      if (!stillThere.has(groupId)) continue;
      if (result.pages > 0 || result.error !== undefined || result.complete)
        recordSweep(options.metrics, result, wallClockMs);
      if (sweepChangedGroup(result)) options.onGroupChanged?.(groupId);
    }
    const { maintenance } = options;
    if (maintenance === undefined) return results;
    const maintain = (under: LeaderTerm) =>
      maintenance.run(this.groups.current(), results, under.fence, this.passSignal(under));
    let refused = await maintain(current);
    for (let moves = 0; refused !== undefined && moves < MAX_TOKEN_MOVES_PER_PASS; moves += 1) {
      // The same as above for a stream only maintenance writes to (a retention stream, say).
      const next = await this.moveTokenPast(current, refused.fenceSeen, { stream: refused.stream });
      if (next === undefined) break;
      current = next;
      refused = await maintain(current);
    }
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
        consumerName,
        cursors: this.cursors,
        // Always the term's fence, even after it ended: a late page is then refused by Redis.
        fence: () => term.fence,
        now: this.now,
      },
      this.passSignal(term),
    );
  }

  private passSignal(term: LeaderTerm): AbortSignal {
    return AbortSignal.any([term.signal, this.stopController.signal]);
  }

  /** The next term, or undefined when the token could not (or must not) move. */
  private async moveTokenPast(
    term: LeaderTerm,
    fenceSeen: number,
    where: { stream: string; group?: string },
  ): Promise<LeaderTerm | undefined> {
    if (term.moveTokenPast === undefined) return undefined;
    try {
      return await term.moveTokenPast(fenceSeen, where);
    } catch (error) {
      this.log.warn(
        { err: error, ...where, fenceSeen },
        "could not move the fencing token past a stream's fence; the next pass tries again",
      );
      return undefined;
    }
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
    this.schedule(this.nextDelayMs());
  }

  private nextDelayMs(): number {
    const backoff = Math.min(2 ** this.failedPasses, MAX_BACKOFF_FACTOR);
    return this.settings.intervalMs * backoff * (1 + 0.2 * this.random());
  }

  /** New groups get their counters at 0; removed ones lose their cursor and every series. */
  private readonly onGroupsChanged = (change: GroupChange): void => {
    initGroupSeries(this.options.metrics, change.added);
    this.options.maintenance?.initGroups([...change.added, ...change.updated]);
    for (const group of change.removed) this.cursors.delete(group.id);
    forgetGroupSeries(this.options.metrics, change.removed).catch((error: unknown) =>
      this.log.error({ err: error }, "could not remove the series of removed groups"),
    );
  };
}
