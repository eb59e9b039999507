/**
 * Every metric family of stream-janitor, described once (README "HTTP and metrics" lists them): name, type, help and label names are written here and nowhere else, the way
 * redis_exporter keeps its metric descriptions in one table. createMetrics() builds the metric
 * objects from a section, and each owner is handed its section's objects. Counters move only on
 * the leader; gauges are set by every replica's collector.
 */
export interface MetricDescription {
  readonly name: string;
  readonly type: "gauge" | "counter" | "histogram";
  readonly help: string;
  readonly labelNames: readonly string[];
  /**
   * One series per group (or stream) in the compact form that renders itself (GroupGauge,
   * GroupCounter: see GroupSeries; GroupHistogram). A gauge of this form is replaced wholesale
   * at each scrape.
   */
  readonly perGroup?: true;
  /**
   * A per-group family whose extra label takes values without bound (consumer names): kept in a
   * map by series rather than in a column of values per label value (see SeriesStore).
   */
  readonly openLabel?: true;
  readonly buckets?: readonly number[];
}

const GROUP = ["stream", "group"] as const;

/** The sections, by owner: createMetrics() builds one section at a time, in this order. */
export const METRIC_TABLE = {
  /** The scrape's gauges (per group), the sweep's counters, leadership and process state. */
  janitor: {
    pendingEntries: {
      name: "stream_janitor_pending_entries",
      type: "gauge",
      perGroup: true,
      help: "Entries in the group's pending entries list (XPENDING count), read at scrape time.",
      labelNames: GROUP,
    },
    pendingMaxIdleSeconds: {
      name: "stream_janitor_pending_max_idle_seconds",
      type: "gauge",
      perGroup: true,
      help: "Largest idle time in the group's PEL: exact as of the last paged PEL scan (see pel_scan_timestamp_seconds; metrics.pelScanIntervalMs apart), raised to the live idle time of the oldest pending entry read at scrape time (the only source before the first scan); 0 while the PEL is empty.",
      labelNames: GROUP,
    },
    pendingOldestAgeSeconds: {
      name: "stream_janitor_pending_oldest_age_seconds",
      type: "gauge",
      perGroup: true,
      help: "Age of the oldest pending id: Redis TIME minus the id's millisecond part, read at scrape time; 0 while the PEL is empty.",
      labelNames: GROUP,
    },
    pendingMaxDeliveries: {
      name: "stream_janitor_pending_max_deliveries",
      type: "gauge",
      perGroup: true,
      help: "Largest delivery count in the group's PEL: exact as of the last paged PEL scan (see pel_scan_timestamp_seconds), raised to the oldest pending entry's count read at scrape time; 0 while the PEL is empty.",
      labelNames: GROUP,
    },
    groupMaxDeliveries: {
      name: "stream_janitor_group_max_deliveries",
      type: "gauge",
      perGroup: true,
      help: "The group's configured maxDeliveries, beside pending_max_deliveries for alerts that compare the two (action monitor never dead-letters an entry delivered more times); for readable groups.",
      labelNames: GROUP,
    },
    pelScanTimestampSeconds: {
      name: "stream_janitor_pel_scan_timestamp_seconds",
      type: "gauge",
      perGroup: true,
      help: "Redis time (Unix seconds) at which the last completed PEL scan of the group started: the freshness of pending_max_idle_seconds and pending_max_deliveries. No sample before the first scan.",
      labelNames: GROUP,
    },
    pendingDueEntries: {
      name: "stream_janitor_pending_due_entries",
      type: "gauge",
      perGroup: true,
      help: "Pending entries the next sweep would claim: idle past minIdleMs, or with backoffMs past their tier (times their jitter), as of the last paged PEL scan (see pel_scan_timestamp_seconds); before the first scan, 1 when the oldest pending entry is due, else 0 (a lower bound).",
      labelNames: GROUP,
    },
    lagEntries: {
      name: "stream_janitor_lag_entries",
      type: "gauge",
      perGroup: true,
      help: "XINFO GROUPS lag; no sample while it is unknown (see lag_valid).",
      labelNames: GROUP,
    },
    lagValid: {
      name: "stream_janitor_lag_valid",
      type: "gauge",
      perGroup: true,
      help: "1 when the group's lag is known: 0 when Redis reports it as null, when the server has no lag, or when it exceeds the stream's length (Redis before 8.0 over-reports it after trims and deletions).",
      labelNames: GROUP,
    },
    lagSeconds: {
      name: "stream_janitor_lag_seconds",
      type: "gauge",
      perGroup: true,
      help: "Upper bound on the age of the oldest entry not yet delivered to the group: Redis TIME minus the millisecond part of the group's last-delivered id while entries wait (lag > 0); 0 when nothing waits. No sample while the lag is unknown or the group has received nothing yet. Read from ids only: no entry is read.",
      labelNames: GROUP,
    },
    backlogEntries: {
      name: "stream_janitor_backlog_entries",
      type: "gauge",
      perGroup: true,
      help: "Work waiting for a consumer, for autoscaling: lag_entries plus pending_due_entries, plus for a group with a retry lane retry_lane_lag_entries and its due copies. No sample while a lag is unknown (see lag_valid): a 0 would scale the consumers to zero.",
      labelNames: GROUP,
    },
    groupReadable: {
      name: "stream_janitor_group_readable",
      type: "gauge",
      perGroup: true,
      help: "1 when the stream exists, is a stream, has the group and its reads succeed; 0 otherwise (missing stream, wrong type, missing group). No sample while Redis does not answer (see redis_up).",
      labelNames: GROUP,
    },
    streamLengthEntries: {
      name: "stream_janitor_stream_length_entries",
      type: "gauge",
      perGroup: true,
      help: "XLEN of the stream; no sample while the stream does not exist.",
      labelNames: ["stream"],
    },
    deadLetterLengthEntries: {
      name: "stream_janitor_dead_letter_length_entries",
      type: "gauge",
      perGroup: true,
      help: "Deprecated: XLEN of the group's dead-letter stream, which counts every group sharing it (0 until the first dead letter creates it). Use dead_letters_entries (per group) or dead_letter_stream_length_entries (per stream).",
      labelNames: GROUP,
    },
    deadLettersEntries: {
      name: "stream_janitor_dead_letters_entries",
      type: "gauge",
      perGroup: true,
      help: "The group's own dead letters, wherever they are kept (other groups sharing its dead-letter stream not counted): the length of its dead-letter index. No sample until that index is built.",
      labelNames: GROUP,
    },
    deadLetterStreamLengthEntries: {
      name: "stream_janitor_dead_letter_stream_length_entries",
      type: "gauge",
      perGroup: true,
      help: "XLEN of a dead-letter stream, once per stream (label stream: the dead-letter stream's key), whichever groups share it.",
      labelNames: ["stream"],
    },
    retryLaneLengthEntries: {
      name: "stream_janitor_retry_lane_length_entries",
      type: "gauge",
      perGroup: true,
      help: "XLEN of the group's retry lane (retryLane: true): the copies the leader has not trimmed yet, that is those pending or not yet delivered, plus those acknowledged since the last maintenance pass; only for groups with a lane.",
      labelNames: GROUP,
    },
    retryLanePendingEntries: {
      name: "stream_janitor_retry_lane_pending_entries",
      type: "gauge",
      perGroup: true,
      help: "Copies pending in the group's retry lane (XINFO GROUPS pending of the lane's group): delivered, not acknowledged. Only for groups with a lane; no sample while the lane exists without its group.",
      labelNames: GROUP,
    },
    retryLaneLagEntries: {
      name: "stream_janitor_retry_lane_lag_entries",
      type: "gauge",
      perGroup: true,
      help: "Copies in the group's retry lane not yet delivered to the group (XINFO GROUPS lag of the lane's group). Only for groups with a lane; no sample while that lag is unknown (null, or above the lane's length) or the lane exists without its group.",
      labelNames: GROUP,
    },
    consumerPendingEntries: {
      name: "stream_janitor_consumer_pending_entries",
      type: "gauge",
      perGroup: true,
      help: "Pending entries per consumer (XPENDING summary), only with metrics.perConsumer: at most metrics.maxConsumersPerGroup consumers per group, those with the most pending; consumers with nothing pending have no sample.",
      labelNames: [...GROUP, "consumer"],
      openLabel: true,
    },
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
      help: "Scrapes answered with the last complete read because their own took longer than metrics.scrapeReadWaitMs (it still lands, for the next scrape).",
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
