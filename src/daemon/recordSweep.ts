import type { EventEmitter } from "node:events";
import type { Logger } from "pino";
import type { GroupSweepResult } from "../sweep/GroupSweepResult.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { JanitorMetrics } from "../metrics/janitorMetrics.js";
import { forgetGroupSeries } from "../metrics/forgetGroupSeries.js";
import type { SupervisorEvents } from "./SupervisorEvents.js";

/** What recordSweepMetrics needs of a Supervisor: its groups and its events. */
interface SweepOutcomes extends EventEmitter<SupervisorEvents> {
  currentGroups(): readonly ResolvedGroup[];
}

/**
 * Subscribes the sweep counters to a supervisor's outcomes: every group's counters start at 0,
 * each group's sweep is counted, and removed groups lose every series.
 */
export function recordSweepMetrics(
  supervisor: SweepOutcomes,
  metrics: JanitorMetrics,
  logger: Logger,
): void {
  initGroupSeries(metrics, supervisor.currentGroups());
  const record = (result: GroupSweepResult, _wallClockMs: number, redisClockMs: number): void =>
    recordSweep(metrics, result, redisClockMs);
  supervisor.on("group-swept", record);
  supervisor.on("group-failed", record);
  supervisor.on("groups-changed", (change) => {
    initGroupSeries(metrics, change.added);
    forgetGroupSeries(metrics, change.removed).catch((error: unknown) =>
      logger.error({ err: error }, "could not remove the series of removed groups"),
    );
  });
}

/**
 * Turns one group's sweep result into counter increments (the leader's view of its work);
 * `redisClockMs` (Redis TIME when the pass ended) stamps the last success.
 */
export function recordSweep(
  metrics: JanitorMetrics,
  result: GroupSweepResult,
  redisClockMs: number,
): void {
  const labels = { stream: result.stream, group: result.group };
  metrics.claimedEntries.inc(labels, result.claimed);
  metrics.requeuedEntries.inc(labels, result.requeued);
  metrics.reassignedEntries.inc(labels, result.reassigned);
  // incWith: no labels object per reason (the counters would keep one per group and reason).
  metrics.deadLetteredEntries.incWith(labels, "max-deliveries", result.deadLetteredMaxDeliveries);
  metrics.deadLetteredEntries.incWith(labels, "action", result.deadLetteredAction);
  if (result.deadLetteredMaxIdle > 0) {
    // Only groups with deadLetterAfterIdleMs have this series (from 0, see initGroupSeries).
    metrics.deadLetteredEntries.incWith(labels, "max-idle", result.deadLetteredMaxIdle);
  }
  metrics.claimedFromActiveConsumerEntries.inc(labels, result.claimedFromActiveConsumer);
  metrics.ghostEntries.inc(labels, result.ghosts);
  metrics.deadLettersDropped.inc(labels, result.deadLettersDropped);
  metrics.sweepDurationSeconds.observe(labels, result.durationMs / 1000);
  metrics.sweeps.inc(labels);
  if (result.error === undefined) {
    metrics.lastSweepSuccessTimestampSeconds.set(labels, redisClockMs / 1000);
  } else {
    metrics.sweepFailures.incWith(labels, result.errorKind ?? "redis");
  }
}

/** True when the sweep changed the group's PEL, so gauges read from it may be stale. */
export function sweepChangedGroup(result: GroupSweepResult): boolean {
  return result.claimed > 0 || result.ghosts > 0;
}

/**
 * Creates every group's counters at 0 on start-up: `increase()` needs a first sample, or the
 * ghosts found by a new leader's very first sweep would never raise an alert.
 */
function initGroupSeries(metrics: JanitorMetrics, groups: readonly ResolvedGroup[]): void {
  for (const { stream, group, deadLetterAfterIdleMs = 0 } of groups) {
    const labels = { stream, group };
    for (const counter of [
      metrics.claimedEntries,
      metrics.requeuedEntries,
      metrics.reassignedEntries,
      metrics.ghostEntries,
      metrics.deadLettersDropped,
      metrics.claimedFromActiveConsumerEntries,
      metrics.sweeps,
    ]) {
      counter.inc(labels, 0);
    }
    metrics.deadLetteredEntries.incWith(labels, "max-deliveries", 0);
    metrics.deadLetteredEntries.incWith(labels, "action", 0);
    // A reason that only deadLetterAfterIdleMs can give.
    if (deadLetterAfterIdleMs > 0) {
      metrics.deadLetteredEntries.incWith(labels, "max-idle", 0);
    }
  }
}
