import { GROUP_LABELS as GROUP, type MetricDescription } from "./MetricDescription.js";

/**
 * The sweep's counters and its duration, moved by the leader as it sweeps, and the time of each
 * group's last successful sweep. Part of METRIC_TABLE.janitor.
 */
export const SWEEP_METRICS = {
  claimedEntries: {
    name: "stream_janitor_claimed_entries_total",
    type: "counter",
    perGroup: true,
    help: "Entries claimed by sweeps.",
    labelNames: GROUP,
  },
  claimedFromActiveConsumerEntries: {
    name: "stream_janitor_claimed_from_active_consumer_entries_total",
    type: "counter",
    perGroup: true,
    help: "Entries claimed by sweeps from a consumer that read from the group within the last minIdleMs (XINFO CONSUMERS idle): most likely still at work on them, so minIdleMs is shorter than the work; raise it, or have consumers send heartbeats.",
    labelNames: GROUP,
  },
  requeuedEntries: {
    name: "stream_janitor_requeued_entries_total",
    type: "counter",
    perGroup: true,
    help: "Entries requeued as copies.",
    labelNames: GROUP,
  },
  reassignedEntries: {
    name: "stream_janitor_reassigned_entries_total",
    type: "counter",
    perGroup: true,
    help: "Entries transferred to a live consumer.",
    labelNames: GROUP,
  },
  deadLetteredEntries: {
    name: "stream_janitor_dead_lettered_entries_total",
    type: "counter",
    perGroup: true,
    help: "Entries moved to the dead-letter stream, by reason (max-deliveries, action or max-idle).",
    labelNames: [...GROUP, "reason"],
  },
  ghostEntries: {
    name: "stream_janitor_ghost_entries_total",
    type: "counter",
    perGroup: true,
    help: "Pending ids a sweep found deleted: their bodies were trimmed or XDELed (data lost).",
    labelNames: GROUP,
  },
  deadLettersDropped: {
    name: "stream_janitor_dead_letters_dropped_total",
    type: "counter",
    perGroup: true,
    help: "Dead letters removed from the dead-letter stream by the group's deadLetterMaxLen cap (data lost; never with the default 0).",
    labelNames: GROUP,
  },
  sweeps: {
    name: "stream_janitor_sweeps_total",
    type: "counter",
    perGroup: true,
    help: "Finished sweeps of one group, successful or not.",
    labelNames: GROUP,
  },
  sweepFailures: {
    name: "stream_janitor_sweep_failures_total",
    type: "counter",
    perGroup: true,
    help: "Failed sweeps, by kind of failure.",
    labelNames: [...GROUP, "kind"],
  },
  sweepDurationSeconds: {
    name: "stream_janitor_sweep_duration_seconds",
    type: "histogram",
    perGroup: true,
    help: "Duration of one sweep of one group.",
    labelNames: GROUP,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30],
  },
  lastSweepSuccessTimestampSeconds: {
    name: "stream_janitor_last_sweep_success_timestamp_seconds",
    type: "gauge",
    perGroup: true,
    help: "Unix time of the group's last successful sweep by this process.",
    labelNames: GROUP,
  },
} as const satisfies Record<string, MetricDescription>;
