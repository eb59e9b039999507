/**
 * Every metric family of stream-janitor, described once (README "HTTP and metrics" lists them): name, type, help and label names are written here and nowhere else, the way
 * redis_exporter keeps its metric descriptions in one table. createMetrics() builds the metric
 * objects from a section, and each owner is handed its section's objects. Counters move only on
 * the leader; gauges are set by every replica's collector.
 */
import { GROUP_LABELS, type MetricDescription } from "./MetricDescription.js";
import { GROUP_GAUGE_METRICS } from "./metricTableGauges.js";
import { SWEEP_METRICS } from "./metricTableSweep.js";

export type { MetricDescription } from "./MetricDescription.js";

const GROUP = GROUP_LABELS;

/** The sections, by owner: createMetrics() builds one section at a time, in this order. */
export const METRIC_TABLE = {
  /** The scrape's gauges (per group), the sweep's counters, leadership and process state. */
  janitor: {
    ...GROUP_GAUGE_METRICS,
    ...SWEEP_METRICS,
    leader: {
      name: "stream_janitor_leader",
      type: "gauge",
      help: "1 while this process holds the lease.",
      labelNames: [],
    },
    fencingToken: {
      name: "stream_janitor_fencing_token",
      type: "gauge",
      help: "Fencing token of this process's current or last lease term.",
      labelNames: [],
    },
    fencingTokenMoves: {
      name: "stream_janitor_fencing_token_moves_total",
      type: "counter",
      help: "Redis Cluster: times the leader met a stream's fence above its fencing token (the token counter went back: a failover before it replicated, or a DEL) and moved the token past it, starting a new term.",
      labelNames: [],
    },
    scrapeReadTimestamp: {
      name: "stream_janitor_scrape_read_timestamp_seconds",
      type: "gauge",
      help: 'When the Redis read behind the per-group gauges of this exposition was made, on the Redis clock (TIME); time() minus it is their age. A scrape waits metrics.scrapeReadWaitMs for a read of its own, then is answered with the last complete one (README "How gauges are read"). No sample while the gauges have none.',
      labelNames: [],
    },
    scrapeLateReads: {
      name: "stream_janitor_scrape_late_reads_total",
      type: "counter",
      help: "Scrapes answered with the last complete read because their own read, or the last one, took longer than metrics.scrapeReadWaitMs less the writing of the page (it still lands, for the next scrape).",
      labelNames: [],
    },
    redisUp: {
      name: "stream_janitor_redis_up",
      type: "gauge",
      help: "1 when the last Redis round trip succeeded.",
      labelNames: [],
    },
    buildInfo: {
      name: "stream_janitor_build_info",
      type: "gauge",
      help: "Always 1; the version label says which build runs.",
      labelNames: ["version"],
    },
  },
  /** Consumer reaping and safe retention (the daemon's maintenance): counters move on the leader. */
  maintenance: {
    consumersReaped: {
      name: "stream_janitor_consumers_reaped_total",
      type: "counter",
      help: "Consumers deleted by reaping (groups[].reapConsumersIdleMs): they owned nothing and were inactive that long.",
      labelNames: GROUP,
    },
    trimmedEntries: {
      name: "stream_janitor_trimmed_entries_total",
      type: "counter",
      help: "Entries removed by safe trimming (retention): never one a group still needs.",
      labelNames: ["stream"],
    },
    retentionBlocked: {
      name: "stream_janitor_retention_blocked",
      type: "gauge",
      help: "1 while this group holds the stream's retention back: the policy wants entries removed that the group has not read or acknowledged yet; else 0.",
      labelNames: GROUP,
    },
  },
  /** Redrive tasks (`dlq redrive --async`), as the leader's runner sees them and moves them. */
  redriveTasks: {
    tasks: {
      name: "stream_janitor_redrive_tasks",
      type: "gauge",
      help: "Redrive tasks (dlq redrive --async) by status, as the leader read them last; finished ones count until they expire.",
      labelNames: ["status"],
    },
    movedEntries: {
      name: "stream_janitor_redrive_task_moved_entries_total",
      type: "counter",
      help: "Dead letters moved back by redrive tasks run on this replica (as leader).",
      labelNames: [],
    },
  },
  /** The configuration reload (SIGHUP). */
  reload: {
    lastReloadSuccessful: {
      name: "stream_janitor_config_last_reload_successful",
      type: "gauge",
      help: "1 when the last SIGHUP reload of the configuration succeeded (or none happened yet), 0 after one failed: the previous configuration is still running.",
      labelNames: [],
    },
  },
  /** The HTTP port's own counters (every replica counts its own requests). */
  http: {
    unauthorized: {
      name: "stream_janitor_http_unauthorized_total",
      type: "counter",
      help: "HTTP requests refused by http.auth (401: credentials missing or wrong), on this replica.",
      labelNames: [],
    },
  },
  /** The console's actions (README "Roles and actions"), on this replica. */
  uiActions: {
    refused: {
      name: "stream_janitor_ui_actions_refused_total",
      type: "counter",
      help: "Console actions refused, by reason: role (not an operator), origin (not sent from the console's page), csrf (token missing, stale or another credential's), confirmation (\"all\" without the group's name).",
      labelNames: ["reason"],
    },
  },
  /** How many groups the discover patterns found, and what the scans cost. */
  discovery: {
    discoveredGroups: {
      name: "stream_janitor_discovered_groups",
      type: "gauge",
      help: "Groups currently found by discover patterns (after listed pairs, excluded streams and discovery.maxGroups).",
      labelNames: [],
    },
    overCap: {
      name: "stream_janitor_discovery_groups_over_cap_total",
      type: "counter",
      help: "Groups a pattern found but discovery.maxGroups left out, added up at every scan: growing means groups go unwatched.",
      labelNames: ["pattern"],
    },
    scanFailures: {
      name: "stream_janitor_discovery_scan_failures_total",
      type: "counter",
      help: "Discovery scans that failed; the groups of the last good scan stay in place.",
      labelNames: [],
    },
    scanDurationSeconds: {
      name: "stream_janitor_discovery_scan_duration_seconds",
      type: "gauge",
      help: "Duration of the last successful discovery scan (SCAN of every pattern and XINFO GROUPS of every match).",
      labelNames: [],
    },
    streamsMatched: {
      name: "stream_janitor_discovery_streams_matched",
      type: "gauge",
      help: "Streams matched by discover patterns at the last scan, excluded ones included.",
      labelNames: [],
    },
  },
  /** The group status (README "Group status"), set by every replica's StatusSampler. */
  status: {
    groupStatus: {
      name: "stream_janitor_group_status",
      type: "gauge",
      perGroup: true,
      help: "1 for the group's current status (ERROR, REWIND, STOP, STALL, STUCK, WARN, UNKNOWN or OK: see /status.json for the reason), 0 for the other seven; set by every replica from its own samples every status.intervalMs. No series before a group's first sample.",
      labelNames: [...GROUP, "status"],
    },
  },
  /** Advisory events: written best effort, so the lost ones are counted. */
  events: {
    eventsWritten: {
      name: "stream_janitor_events_total",
      type: "counter",
      help: "Advisory events written to events.stream, by type.",
      labelNames: ["type"],
    },
    eventsLost: {
      name: "stream_janitor_events_lost_total",
      type: "counter",
      help: "Advisory events that could not be written (never retried): the events stream misses them.",
      labelNames: ["type"],
    },
  },
} as const satisfies Record<string, Record<string, MetricDescription>>;
