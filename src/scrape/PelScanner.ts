import type { Logger } from "pino";
import type { RedisClient } from "../redis/RedisClient.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { classifyReplyError, isReplyError } from "../redis/replies.js";
import { withJitter } from "../core/jitter.js";
import { PeriodicTask } from "../core/PeriodicTask.js";
import { backgroundTimers, type Timers } from "../core/timers.js";
import { scanGroupPel, type PelScanResult } from "./scanGroupPel.js";
import { outageField } from "../redis/outageField.js";

export interface PelScannerOptions {
  redis: RedisClient;
  groups: readonly ResolvedGroup[];
  logger: Logger;
  /** Pause between the end of one scan and the start of the next (plus jitter). */
  intervalMs: number;
  /** XPENDING COUNT per call: 1,000 keeps each call around a millisecond of Redis time. */
  pageSize?: number;
  /** Bound on one page's round trip. */
  pageTimeoutMs?: number;
  random?: () => number;
  /** The cadence's and the rescans' timers; backgroundTimers (a scan keeps no process alive). */
  timers?: Timers;
}

/**
 * Scans every group's whole PEL with client-side paging (`XPENDING key group start + 1000`, then
 * from `(lastId`), so Redis is never blocked for more than one page; the exact maximum idle time
 * and delivery count cannot come from anything cheaper. Scans run one after another on their own
 * jittered cadence, never overlapping; scanOnce() is the scan itself, for tests and start-up.
 */
export class PelScanner {
  /** Latest result per group id; a group that is missing or unreadable has none. */
  readonly results = new Map<string, PelScanResult>();
  private options: PelScannerOptions;
  private readonly log: Logger;
  private readonly timers: Timers;
  /** Its passes, timed or asked for: one at a time (a pass asked for meanwhile joins it). */
  private readonly loop: PeriodicTask<void>;
  private lastFailure = "";
  /** Bumped by markChanged(): a scan that started before the change must not store its result. */
  private readonly generations = new Map<string, number>();
  /** Groups a sweep changed, waiting for their own rescan. */
  private readonly changed = new Set<string>();
  private rescanTimer: unknown;

  constructor(options: PelScannerOptions) {
    this.options = options;
    this.log = options.logger.child({ component: "pel-scan" });
    this.timers = options.timers ?? backgroundTimers;
    this.loop = new PeriodicTask({
      run: (signal) => this.scanAll(this.options.groups, signal),
      nextDelayMs: () => withJitter(this.options.intervalMs, this.options.random ?? Math.random),
      onError: (error) => this.reportFailure(error),
      timers: this.timers,
    });
  }

  /** First scan right away (the gauges fall back to the oldest entry until it finishes). */
  start(): void {
    this.loop.start(0);
  }

  /**
   * A sweep changed this group's PEL: its last result may hold a maximum that is gone. The result
   * is dropped at once (the gauges fall back to the live oldest entry, a lower bound that is right
   * after a sweep emptied the old tail) and the group alone is rescanned soon, without waiting for
   * the full cadence.
   */
  markChanged(groupId: string): void {
    this.generations.set(groupId, (this.generations.get(groupId) ?? 0) + 1);
    this.results.delete(groupId);
    this.changed.add(groupId);
    if (this.rescanTimer !== undefined || this.loop.signal.aborted) return;
    this.rescanTimer = this.timers.setTimeout(() => {
      this.rescanTimer = undefined;
      void this.rescanChanged().catch((error: unknown) => this.reportFailure(error));
    }, 0);
  }

  /** Rescans the groups markChanged() named, after any pass in flight (scans never overlap). */
  async rescanChanged(): Promise<void> {
    await this.loop.settled();
    const ids = new Set(this.changed);
    this.changed.clear();
    const groups = this.options.groups.filter((group) => ids.has(group.id));
    if (groups.length === 0) return;
    await this.scanOnce(this.loop.signal, groups);
  }

  async stop(): Promise<void> {
    const stopping = this.loop.stop();
    if (this.rescanTimer !== undefined) this.timers.clearTimeout(this.rescanTimer);
    this.rescanTimer = undefined;
    await stopping;
  }

  /** A new list of groups (reload, discovery): the next pass scans it; gone groups lose results. */
  setGroups(groups: readonly ResolvedGroup[]): void {
    this.options = { ...this.options, groups };
    const ids = new Set(groups.map((group) => group.id));
    for (const id of this.results.keys()) if (!ids.has(id)) this.results.delete(id);
  }

  /** Drops every result: after Redis was unreachable, the data may no longer be the same. */
  forget(): void {
    this.results.clear();
  }

  /** One pass over every group (or these). A call while a pass runs joins that pass. */
  scanOnce(signal: AbortSignal, groups = this.options.groups): Promise<void> {
    return this.loop.runOnce((stop) => this.scanAll(groups, AbortSignal.any([signal, stop])));
  }

  private reportFailure(error: unknown): void {
    if (this.loop.signal.aborted) return;
    const message = error instanceof Error ? error.message : String(error);
    // A Redis outage fails every pass the same way: say so once, not every interval.
    if (message !== this.lastFailure) this.log.warn({ err: outageField(error) }, "PEL scan failed");
    this.lastFailure = message;
  }

  private async scanAll(groups: readonly ResolvedGroup[], signal: AbortSignal): Promise<void> {
    for (const group of groups) {
      if (signal.aborted) return;
      const generation = this.generations.get(group.id);
      try {
        const { redis, pageSize, pageTimeoutMs } = this.options;
        const result = await scanGroupPel(redis, group, signal, { pageSize, pageTimeoutMs });
        if (result === undefined) return;
        // Changed by a sweep meanwhile: this maximum may be gone; the rescan will tell.
        if (this.generations.get(group.id) !== generation) continue;
        this.results.set(group.id, result);
      } catch (error) {
        if (!(error instanceof Error) || !isReplyError(error)) throw error;
        // Missing or mistyped: that group has no result; the scrape logs the state change.
        this.results.delete(group.id);
        this.log.debug(
          { stream: group.stream, group: group.group, problem: classifyReplyError(error) },
          "PEL scan skipped the group",
        );
      }
    }
    this.lastFailure = "";
  }
}
