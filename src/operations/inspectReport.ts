import type { JanitorConfig, RetentionConfig } from "../core/configTypes.js";
import type { GroupStatus } from "../core/groupStatus.js";
import { readGroupSnapshots } from "../scrape/readGroupSnapshots.js";
import { scanGroupPel } from "../scrape/PelScanner.js";
import { ownDeadLetters, type GroupReading } from "../scrape/GroupReading.js";
import { laneLag } from "../scrape/retryLaneWork.js";
import type { Command, PipelineReply } from "../redis/pipeline/runPipeline.js";
import { runReadPipeline } from "../redis/pipeline/runReadPipeline.js";
import type { RedisClient } from "../redis/RedisClient.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { compareStreamIds, streamIdMs } from "../core/streamIds.js";
import { deadLetterIndexKeys } from "../core/deadLetterIndex.js";
import { leaseCommands, leaseInspection, type LeaseInspection } from "./inspectLease.js";

/** Inspect's PEL scan (for the due entries) stops after this many entries per group. */
const INSPECT_SCAN_LIMIT = 100_000;

/** Consumers listed per group: those holding the most pending entries. */
const TOP_CONSUMERS = 3;

export interface GroupInspection {
  stream: string;
  group: string;
  /** Set when the group could not be read (no stream, no group, wrong type); the rest is absent. */
  error?: string;
  pending?: number;
  /** Age of the oldest pending id (Redis TIME minus its millisecond part); null: empty PEL. */
  oldestPendingAgeMs?: number | null;
  /** How long ago that entry was last delivered. */
  oldestPendingIdleMs?: number | null;
  /**
   * Pending entries the next sweep would claim (idle past minIdleMs, or past their backoff tier):
   * from one paged scan of the PEL, as stream_janitor_pending_due_entries has it.
   */
  pendingDue?: number;
  /** Set when the PEL is larger than inspect scans (INSPECT_SCAN_LIMIT): pendingDue is a lower bound. */
  pendingDueAtLeast?: true;
  topConsumers?: { consumer: string; pending: number }[];
  consumersWithPending?: number;
  /** XINFO GROUPS lag; null when Redis does not know it. */
  lag?: number | null;
  /** Age of the oldest entry not yet delivered to the group; 0 when caught up. */
  lagMs?: number;
  streamLength?: number;
  deadLetterStream: string;
  /** XLEN of the dead-letter stream, every group sharing it included (see deadLetters). */
  deadLetterLength?: number;
  /** The group's own dead letters (the length of its dead-letter index). */
  deadLetters?: number;
  /** Set while the group's dead-letter index is still being built: deadLetters is a lower bound. */
  deadLettersAtLeast?: true;
  /**
   * Age of the group's oldest dead letter (the first entry of its index; while the index is
   * being built, of the dead-letter stream's first entry, whichever group it belongs to).
   */
  oldestDeadLetterAgeMs?: number | null;
  /**
   * Time between the stream's first entry and the oldest entry the group still needs; when it
   * needs nothing, the age of the first entry. null for an empty stream. At 0 a MAXLEN trim
   * would create ghosts.
   */
  retentionHeadroomMs?: number | null;
  retention?: RetentionConfig;
  /** With retryLane: the group's retry lane and its XLEN (requeued copies not yet consumed). */
  retryLaneStream?: string;
  retryLaneLength?: number;
  /** With retryLane: the lane's work; lag and pending null when unknown (lane without group). */
  retryLane?: { stream: string; length: number; lag: number | null; pending: number | null };
  /** The verdict of the janitor that answered at /status.json; null without one (or not yet sampled). */
  status?: GroupStatus | null;
  /** That verdict in words; null with it. */
  statusReason?: string | null;
}

export interface InspectReport {
  /** Redis TIME, Unix ms. */
  nowMs: number;
  lease: LeaseInspection;
  groups: GroupInspection[];
  /** Why the groups have no status: no janitor answered, or it refused (absent when one did). */
  statusProblem?: string;
}

function describeProblem(reading: Exclude<GroupReading, { state: "ok" }>): string {
  const { stream, group } = reading.group;
  switch (reading.state) {
    case "no-stream":
      return `stream ${stream} is missing`;
    case "no-group":
      return `group ${group} is missing on ${stream}`;
    default:
      return reading.detail;
  }
}

function inspectGroup(
  reading: GroupReading,
  ids: { firstEntryId: string | undefined; firstUndeliveredId: string | undefined },
  nowMs: number,
  streamLength: number | undefined,
  oldestDeadLetterId: string | undefined,
  retention: RetentionConfig | undefined,
  due: { dueEntries: number; partial?: true } | undefined,
): GroupInspection {
  const { group } = reading;
  const base = {
    stream: group.stream,
    group: group.group,
    deadLetterStream: group.deadLetterStream,
    ...(retention === undefined ? {} : { retention }),
    ...(group.retryLaneStream === undefined ? {} : { retryLaneStream: group.retryLaneStream }),
  };
  if (reading.state !== "ok") return { ...base, error: describeProblem(reading) };
  const values = reading.values;
  const age = (id: string | undefined): number | null =>
    id === undefined ? null : Math.max(0, nowMs - streamIdMs(id));
  const needed = [values.oldestPendingId, ids.firstUndeliveredId]
    .filter((id): id is string => id !== undefined)
    .sort(compareStreamIds)[0];
  let headroom: number | null = null;
  if (ids.firstEntryId !== undefined) {
    const neededMs = needed === undefined ? nowMs : streamIdMs(needed);
    headroom = Math.max(0, neededMs - streamIdMs(ids.firstEntryId));
  }
  const consumers = [...values.consumers].sort((a, b) => b[1] - a[1]);
  return {
    ...base,
    pending: values.pending,
    ...(due === undefined ? {} : { pendingDue: due.dueEntries }),
    ...(due?.partial === true ? { pendingDueAtLeast: true as const } : {}),
    oldestPendingAgeMs: age(values.oldestPendingId),
    oldestPendingIdleMs: values.oldestPendingId === undefined ? null : values.oldestPendingIdleMs,
    topConsumers: consumers
      .slice(0, TOP_CONSUMERS)
      .map(([consumer, pending]) => ({ consumer, pending })),
    consumersWithPending: consumers.length,
    lag: values.lag,
    lagMs: age(ids.firstUndeliveredId) ?? 0,
    ...(streamLength === undefined ? {} : { streamLength }),
    deadLetterLength: values.deadLetterLength ?? 0,
    deadLetters: ownDeadLetters(values).count,
    ...(ownDeadLetters(values).exact ? {} : { deadLettersAtLeast: true as const }),
    oldestDeadLetterAgeMs: age(oldestDeadLetterId),
    retentionHeadroomMs: headroom,
    ...(group.retryLaneStream === undefined
      ? {}
      : {
          retryLaneLength: values.retryLaneLength ?? 0,
          retryLane: {
            stream: group.retryLaneStream,
            length: values.retryLaneLength ?? 0,
            lag: laneLag(values) ?? null,
            pending: values.retryLaneGroup?.pending ?? null,
          },
        }),
  };
}

/**
 * `inspect`: one read-only report of every configured group and of the lease. Built on the
 * metrics' own two pipelines (readGroupSnapshots) plus one more for the dead letters and the
 * lease; every command is O(1) or O(consumers) whatever the PEL size: the XPENDING summary walks
 * consumers, not entries, and only single entries are read. The due entries alone need the
 * paged PEL scan the gauges run (1,000 entries per XPENDING call, so Redis is never blocked long),
 * bounded to INSPECT_SCAN_LIMIT entries per group so that inspect stays quick on any PEL.
 */
export async function readInspectReport(
  redis: RedisClient,
  groups: readonly ResolvedGroup[],
  config: Pick<JanitorConfig, "lease" | "retention">,
  timeoutMs = 10_000,
): Promise<InspectReport> {
  const snapshot = await readGroupSnapshots(redis, groups, {
    timeoutMs,
    perConsumer: true,
    // The read-only operator user may not run scripts (deploy/redis/stream-janitor.acl).
    scripted: false,
  });
  const commands: Command[] = leaseCommands(config.lease.key);
  // Unlike the scrape, inspect may read single entries (ids are all it keeps): the first dead
  // letter, the stream's first entry and the first entry after the group's last-delivered id.
  for (const reading of snapshot.groups) {
    const { group } = reading;
    // The group's oldest dead letter: the first entry of its index (an envelope, no body).
    const indexed = reading.state === "ok" && reading.values.deadLettersExact === true;
    const letters = indexed ? deadLetterIndexKeys(group).index : group.deadLetterStream;
    commands.push(["XRANGE", letters, "-", "+", "COUNT", 1]);
    commands.push(["XRANGE", group.stream, "-", "+", "COUNT", 1]);
    const after = reading.state === "ok" ? `(${reading.values.lastDeliveredId}` : "+";
    commands.push(["XRANGE", group.stream, after, "+", "COUNT", 1]);
  }
  // On Cluster these keys live on several nodes: one pipeline per node (the lease key and its
  // companions share one slot, so the holder record is read from the node holding the lease).
  const replies = await runReadPipeline(redis, commands, timeoutMs);
  const never = new AbortController().signal;
  const due = await Promise.all(
    snapshot.groups.map(async (reading) =>
      reading.state === "ok" && reading.values.pending > 0
        ? await scanGroupPel(redis, reading.group, never, {
            pageTimeoutMs: timeoutMs,
            maxEntries: INSPECT_SCAN_LIMIT,
          })
        : { dueEntries: 0 },
    ),
  );
  const lease = leaseInspection(config.lease.key, replies);
  const firstId = (reply: PipelineReply | undefined): string | undefined => {
    const entries = reply?.value;
    return Array.isArray(entries) ? (entries[0] as [string, unknown] | undefined)?.[0] : undefined;
  };
  const inspections = snapshot.groups.map((reading, index) => {
    const first = firstId(replies[4 + 3 * index]);
    const ids = {
      firstEntryId: firstId(replies[5 + 3 * index]),
      firstUndeliveredId: firstId(replies[6 + 3 * index]),
    };
    const retention = config.retention.find((r) => r.stream === reading.group.stream);
    return inspectGroup(
      reading,
      ids,
      snapshot.nowMs,
      snapshot.streamLengths.get(reading.group.stream),
      first,
      retention,
      due[index],
    );
  });
  return { nowMs: snapshot.nowMs, lease, groups: inspections };
}
