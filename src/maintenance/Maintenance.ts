import { EventEmitter } from "node:events";
import type { Logger } from "pino";
import type { RetentionConfig } from "../core/configTypes.js";
import type { Fence } from "../core/fence.js";
import type { MaintenanceMetrics } from "../metrics/maintenanceMetrics.js";
import type { MaintenanceEvents } from "./MaintenanceEvents.js";
import { reapConsumers } from "./reapConsumers.js";
import { safeTrim } from "./safeTrim.js";
import { parseXinfoGroupNames } from "../redis/replies.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import { runTrimRetryLane } from "../scripts/trimRetryLane.js";
import { fenceAboveToken } from "../sweep/slotFence.js";
import { classifySweepError } from "../sweep/sweepErrors.js";
import type { GroupSweepResult } from "../sweep/GroupSweepResult.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";

/**
 * Copies one trimRetryLane call removes at most: 0.4-0.8 ms of Redis time for 200-byte copies on
 * the 2-core test machine under load, so one call stays short; a pass calls again while there
 * is more, up to maxTrimmedPerPass.
 */
const LANE_TRIM_PAGE_SIZE = 2000;

export interface MaintenanceOptions {
  redis: ScriptedRedis;
  logger: Logger;
  metrics: MaintenanceMetrics;
  retention: readonly RetentionConfig[];
  /** The janitor's own consumer: never reaped. */
  janitorConsumer: string;
  /** Entries trimmed per stream and pass at most; the rest waits for the next pass. */
  maxTrimmedPerPass: number;
}

/**
 * The leader's housekeeping after each sweep pass, under the same fence as the sweep: reaps
 * idle consumers of the groups that ask for it (groups[].reapConsumersIdleMs), trims each retry
 * lane to its live work and the `retention` streams safely. A problem with one group or stream
 * is logged and skipped; a fenced script (the lease moved) ends the work, since every later one
 * would be refused too.
 * What it changed is emitted as MaintenanceEvents.
 */
export class Maintenance extends EventEmitter<MaintenanceEvents> {
  private options: MaintenanceOptions;
  private readonly log: Logger;
  /** Per retention stream, the groups that have a retention_blocked series. */
  private readonly reportedGroups = new Map<string, Set<string>>();
  /** Per retention stream, the groups that held it back at the last pass, as logged. */
  private readonly heldBackBy = new Map<string, string>();

  constructor(options: MaintenanceOptions) {
    super();
    this.options = options;
    this.log = options.logger.child({ component: "maintenance" });
    for (const { stream } of options.retention) options.metrics.trimmedEntries.inc({ stream }, 0);
  }

  /** A SIGHUP reload: the next pass trims toward the new policies. */
  updateRetention(retention: readonly RetentionConfig[]): void {
    this.options = { ...this.options, retention };
    for (const { stream } of retention) this.options.metrics.trimmedEntries.inc({ stream }, 0);
  }

  /** Counters at 0 for every group that reaps, so that increase() has a first sample. */
  initGroups(groups: readonly ResolvedGroup[]): void {
    for (const { stream, group, reapConsumersIdleMs } of groups) {
      if ((reapConsumersIdleMs ?? 0) > 0)
        this.options.metrics.consumersReaped.inc({ stream, group }, 0);
    }
  }

  /**
   * Resolves to the fence that refused it when that fence is above our token (Redis Cluster; see
   * LeaderTerm.moveTokenPast), so the caller may move the token and run again; else undefined.
   */
  async run(
    groups: readonly ResolvedGroup[],
    results: readonly GroupSweepResult[],
    fence: Fence,
    signal: AbortSignal,
  ): Promise<{ stream: string; fenceSeen: number } | undefined> {
    let stream: string | undefined;
    // By group id: a search of the results per group would cost 10,000 x 10,000 at 10,000 groups.
    const sweptById = new Map<string, GroupSweepResult>();
    for (const r of results) {
      const id = `${r.stream}/${r.group}`;
      if (!sweptById.has(id)) sweptById.set(id, r);
    }
    try {
      for (const group of groups) {
        if (signal.aborted) return undefined;
        const idleMs = group.reapConsumersIdleMs ?? 0;
        const swept = sweptById.get(group.id);
        stream = group.stream;
        if (idleMs > 0 && swept?.error === undefined) await this.reap(group, idleMs, fence);
        if (swept?.error === undefined) await this.trimLane(group, fence, signal);
      }
      for (const retention of this.options.retention) {
        if (signal.aborted) return undefined;
        stream = retention.stream;
        await this.trim(retention, fence, signal);
      }
    } catch (error) {
      if (classifySweepError(error).kind !== "fenced") throw error;
      const fenceSeen =
        stream === undefined ? undefined : await fenceAboveToken(this.options.redis, fence, stream);
      // With a fence above our token the caller may yet find the lease ours (see the return).
      this.log.warn(
        { stream, fenceSeen },
        "maintenance stopped: the lease is held by another process",
      );
      if (stream !== undefined && fenceSeen !== undefined) return { stream, fenceSeen };
    }
    return undefined;
  }

  private async reap(group: ResolvedGroup, idleMs: number, fence: Fence): Promise<void> {
    const labels = { stream: group.stream, group: group.group };
    try {
      const summary = await reapConsumers(this.options.redis, {
        ...labels,
        idleMs,
        janitorConsumer: this.options.janitorConsumer,
        dryRun: false,
        fence,
      });
      this.options.metrics.consumersReaped.inc(labels, summary.reaped.length);
      if (summary.reaped.length > 0) {
        this.log.info(
          { ...labels, consumers: summary.reaped, idleMs },
          "reaped consumers that owned nothing and were idle",
        );
        this.emit("consumers-reaped", { ...labels, consumers: summary.reaped, idleMs });
      }
    } catch (error) {
      if (classifySweepError(error).kind === "fenced") throw error;
      this.log.error({ ...labels, err: error }, "could not reap consumers");
    }
  }

  /**
   * A retry lane keeps only its live work: the copies its group delivered and acknowledged go
   * (trimRetryLane.lua, the safe-trim rule), at each pass, so that the lane's length is what
   * still waits and a re-created lane group delivers again as little as possible.
   */
  private async trimLane(group: ResolvedGroup, fence: Fence, signal: AbortSignal): Promise<void> {
    const lane = group.retryLaneStream;
    if (lane === undefined) return;
    const labels = { stream: group.stream, group: group.group, retryLane: lane };
    let removed = 0;
    try {
      for (;;) {
        const page = await runTrimRetryLane(this.options.redis, {
          stream: group.stream,
          lane,
          group: group.group,
          fence,
          pageSize: LANE_TRIM_PAGE_SIZE,
        });
        removed += page.removed;
        if (!page.more || removed >= this.options.maxTrimmedPerPass || signal.aborted) {
          if (removed > 0)
            this.log.debug({ ...labels, removed, length: page.length }, "retry lane trimmed");
          return;
        }
      }
    } catch (error) {
      if (classifySweepError(error).kind === "fenced") throw error;
      this.log.error({ ...labels, err: error }, "could not trim the retry lane");
    }
  }

  /**
   * retention_blocked for every group of the stream, as its help says: 1 for the groups that held
   * the trim back, 0 for the others (configured or not); a group that is gone leaves the gauge.
   * When the groups cannot be listed, the series already there are kept up to date.
   */
  private async reportBlocked(stream: string, blocking: ReadonlySet<string>): Promise<void> {
    const gauge = this.options.metrics.retentionBlocked;
    const reported = this.reportedGroups.get(stream) ?? new Set<string>();
    const listed = await this.options.redis
      .call("XINFO", "GROUPS", stream)
      .then(parseXinfoGroupNames)
      .catch(() => undefined);
    const groups = new Set([...(listed ?? reported), ...blocking]);
    for (const group of reported) if (!groups.has(group)) gauge.remove({ stream, group });
    for (const group of groups) gauge.set({ stream, group }, blocking.has(group) ? 1 : 0);
    this.reportedGroups.set(stream, groups);
  }

  /**
   * Retention held back is a state (retention_blocked holds it): logged when it starts, when the
   * groups holding it change and when it ends, not once per pass.
   */
  private logHeldBack(fields: { stream: string }, blockedBy: readonly { group: string }[]): void {
    const { stream } = fields;
    const holders = blockedBy
      .map((b) => b.group)
      .sort()
      .join(",");
    const before = this.heldBackBy.get(stream) ?? "";
    if (holders === before) return;
    this.heldBackBy.set(stream, holders);
    if (holders !== "") {
      this.log.warn(
        { ...fields, blockedBy },
        "retention held back: groups still need entries the policy would remove",
      );
    } else {
      this.log.info(fields, "retention proceeds: no group holds it back any more");
    }
  }

  private async trim(retention: RetentionConfig, fence: Fence, signal: AbortSignal): Promise<void> {
    const { stream } = retention;
    try {
      const summary = await safeTrim(this.options.redis, {
        stream,
        maxLen: retention.maxLen > 0 ? retention.maxLen : undefined,
        maxAgeMs: retention.maxAgeMs > 0 ? retention.maxAgeMs : undefined,
        dryRun: false,
        fence,
        maxRemoved: this.options.maxTrimmedPerPass,
        signal,
      });
      this.options.metrics.trimmedEntries.inc({ stream }, summary.removed);
      await this.reportBlocked(stream, new Set(summary.blockedBy.map((b) => b.group)));
      if (summary.removed > 0) {
        const { maxLen, maxAgeMs } = retention;
        const { removed, length, blockedBy } = summary;
        this.emit("trimmed", { stream, maxLen, maxAgeMs, removed, length, blockedBy });
      }
      const fields = { stream, removed: summary.removed, length: summary.length };
      this.logHeldBack(fields, summary.blockedBy);
      if (summary.blockedBy.length === 0 && summary.removed > 0) {
        this.log.info(fields, "trimmed safely");
      }
    } catch (error) {
      if (classifySweepError(error).kind === "fenced") throw error;
      this.log.error({ stream, err: error }, "could not trim");
    }
  }
}
