import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { GroupCounter } from "./GroupCounter.js";
import { GroupGauge } from "./GroupGauge.js";
import { LabelTexts } from "./LabelTexts.js";

/**
 * Every metric family, defined in one table (contract section 5 plus the age-based extras).
 * Counters move only on the leader; gauges are set by every replica's collector.
 */
const GROUP = ["stream", "group"] as const;
type GroupLabels = (typeof GROUP)[number];

export interface JanitorMetrics {
  readonly registry: Registry;
  readonly pendingEntries: GroupGauge<GroupLabels>;
  readonly pendingMaxIdleSeconds: GroupGauge<GroupLabels>;
  readonly pendingOldestAgeSeconds: GroupGauge<GroupLabels>;
  readonly pendingMaxDeliveries: GroupGauge<GroupLabels>;
  readonly pelScanTimestampSeconds: GroupGauge<GroupLabels>;
  readonly lagEntries: GroupGauge<GroupLabels>;
  readonly lagValid: GroupGauge<GroupLabels>;
  readonly lagSeconds: GroupGauge<GroupLabels>;
  readonly groupReadable: GroupGauge<GroupLabels>;
  readonly streamLengthEntries: GroupGauge<"stream">;
  readonly deadLetterLengthEntries: GroupGauge<GroupLabels>;
  readonly consumerPendingEntries: GroupGauge<GroupLabels | "consumer">;
  readonly claimedEntries: GroupCounter<GroupLabels>;
  readonly requeuedEntries: GroupCounter<GroupLabels>;
  readonly reassignedEntries: GroupCounter<GroupLabels>;
  readonly deadLetteredEntries: GroupCounter<GroupLabels | "reason">;
  readonly ghostEntries: GroupCounter<GroupLabels>;
  readonly deadLettersDropped: GroupCounter<GroupLabels>;
  readonly sweeps: GroupCounter<GroupLabels>;
  readonly sweepFailures: GroupCounter<GroupLabels | "kind">;
  readonly sweepDurationSeconds: Histogram<GroupLabels>;
  readonly lastSweepSuccessTimestampSeconds: Gauge<GroupLabels>;
  readonly leader: Gauge;
  readonly fencingToken: Gauge;
  readonly fencingTokenMoves: Counter;
  readonly redisUp: Gauge;
  readonly buildInfo: Gauge<"version">;
}

export function createJanitorMetrics(registry: Registry, version: string): JanitorMetrics {
  const registers = [registry];
  const gauge = <L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
  ): Gauge<L> => new Gauge({ name: `stream_janitor_${name}`, help, labelNames, registers });
  // One label text per group (or stream), shared by the families that have those labels.
  const shared = [new LabelTexts(GROUP), new LabelTexts(["stream"] as const)];
  const options = <L extends string>(name: string, help: string, labelNames: readonly L[]) => ({
    name: `stream_janitor_${name}`,
    help,
    labelNames,
    registry,
    labelTexts: shared.find((texts) => texts.labelNames.join() === labelNames.join()) as
      LabelTexts<L> | undefined,
  });
  /** The gauges every scrape replaces: see GroupGauge. */
  const scraped = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new GroupGauge(options(name, help, labelNames));
  /** Per-group counters: see GroupCounter. */
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new GroupCounter(options(name, help, labelNames));

  const metrics: JanitorMetrics = {
    registry,
    pendingEntries: scraped(
      "pending_entries",
      "Entries in the group's pending entries list (XPENDING count), read at scrape time.",
      GROUP,
    ),
    pendingMaxIdleSeconds: scraped(
      "pending_max_idle_seconds",
      "Largest idle time in the group's PEL: exact as of the last paged PEL scan (see pel_scan_timestamp_seconds; metrics.pelScanIntervalMs apart), raised to the live idle time of the oldest pending entry read at scrape time (the only source before the first scan); 0 while the PEL is empty.",
      GROUP,
    ),
    pendingOldestAgeSeconds: scraped(
      "pending_oldest_age_seconds",
      "Age of the oldest pending id: Redis TIME minus the id's millisecond part, read at scrape time; 0 while the PEL is empty.",
      GROUP,
    ),
    pendingMaxDeliveries: scraped(
      "pending_max_deliveries",
      "Largest delivery count in the group's PEL: exact as of the last paged PEL scan (see pel_scan_timestamp_seconds), raised to the oldest pending entry's count read at scrape time; 0 while the PEL is empty.",
      GROUP,
    ),
    pelScanTimestampSeconds: scraped(
      "pel_scan_timestamp_seconds",
      "Redis time (Unix seconds) at which the last completed PEL scan of the group started: the freshness of pending_max_idle_seconds and pending_max_deliveries. No sample before the first scan.",
      GROUP,
    ),
    lagEntries: scraped(
      "lag_entries",
      "XINFO GROUPS lag; no sample while it is unknown (see lag_valid).",
      GROUP,
    ),
    lagValid: scraped(
      "lag_valid",
      "1 when the group's lag is known: 0 when Redis reports it as null, when the server has no lag, or when it exceeds the stream's length (Redis before 8.0 over-reports it after trims and deletions).",
      GROUP,
    ),
    lagSeconds: scraped(
      "lag_seconds",
      "Upper bound on the age of the oldest entry not yet delivered to the group: Redis TIME minus the millisecond part of the group's last-delivered id while entries wait (lag > 0); 0 when nothing waits. No sample while the lag is unknown or the group has received nothing yet. Read from ids only: no entry is read.",
      GROUP,
    ),
    groupReadable: scraped(
      "group_readable",
      "1 when the stream exists, is a stream, has the group and its reads succeed; 0 otherwise (missing stream, wrong type, missing group). No sample while Redis does not answer (see redis_up).",
      GROUP,
    ),
    streamLengthEntries: scraped(
      "stream_length_entries",
      "XLEN of the stream; no sample while the stream does not exist.",
      ["stream"],
    ),
    deadLetterLengthEntries: scraped(
      "dead_letter_length_entries",
      "XLEN of the group's dead-letter stream (0 until the first dead letter creates it).",
      GROUP,
    ),
    consumerPendingEntries: scraped(
      "consumer_pending_entries",
      "Pending entries per consumer (XPENDING summary), only with metrics.perConsumer: at most metrics.maxConsumersPerGroup consumers per group, those with the most pending; consumers with nothing pending have no sample.",
      [...GROUP, "consumer"],
    ),
    claimedEntries: counter("claimed_entries_total", "Entries claimed by sweeps.", GROUP),
    requeuedEntries: counter("requeued_entries_total", "Entries requeued as copies.", GROUP),
    reassignedEntries: counter(
      "reassigned_entries_total",
      "Entries transferred to a live consumer.",
      GROUP,
    ),
    deadLetteredEntries: counter(
      "dead_lettered_entries_total",
      "Entries moved to the dead-letter stream, by reason (max-deliveries or action).",
      [...GROUP, "reason"],
    ),
    ghostEntries: counter(
      "ghost_entries_total",
      "Pending ids XAUTOCLAIM reported as deleted: their bodies were trimmed or XDELed (data lost).",
      GROUP,
    ),
    deadLettersDropped: counter(
      "dead_letters_dropped_total",
      "Dead letters removed from the dead-letter stream by the group's deadLetterMaxLen cap (data lost; never with the default 0).",
      GROUP,
    ),
    sweeps: counter("sweeps_total", "Finished sweeps of one group, successful or not.", GROUP),
    sweepFailures: counter("sweep_failures_total", "Failed sweeps, by kind of failure.", [
      ...GROUP,
      "kind",
    ]),
    sweepDurationSeconds: new Histogram({
      name: "stream_janitor_sweep_duration_seconds",
      help: "Duration of one sweep of one group.",
      labelNames: GROUP,
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30],
      registers,
    }),
    lastSweepSuccessTimestampSeconds: gauge(
      "last_sweep_success_timestamp_seconds",
      "Unix time of the group's last successful sweep by this process.",
      GROUP,
    ),
    leader: gauge("leader", "1 while this process holds the lease.", []),
    fencingToken: gauge(
      "fencing_token",
      "Fencing token of this process's current or last lease term.",
      [],
    ),
    fencingTokenMoves: new Counter({
      name: "stream_janitor_fencing_token_moves_total",
      help: "Redis Cluster: times the leader met a stream's fence above its fencing token (the token counter went back: a failover before it replicated, or a DEL) and moved the token past it, starting a new term.",
      registers,
    }),
    redisUp: gauge("redis_up", "1 when the last Redis round trip succeeded.", []),
    buildInfo: gauge("build_info", "Always 1; the version label says which build runs.", [
      "version",
    ]),
  };
  metrics.buildInfo.set({ version }, 1);
  metrics.leader.set(0);
  metrics.redisUp.set(0);
  return metrics;
}
