import type { RetentionConfig } from "../core/configTypes.js";
import type { GroupStatus } from "../core/groupStatus.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { compareStreamIds, streamIdMs } from "../core/streamIds.js";
import { ownDeadLetters, type GroupReading, type GroupValues } from "../scrape/GroupReading.js";
import { laneLag } from "../scrape/retryLaneWork.js";

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

/** How far the stream's first entry is from the oldest entry the group still needs (ms). */
function retentionHeadroomMs(
  values: GroupValues,
  ids: { firstEntryId: string | undefined; firstUndeliveredId: string | undefined },
  nowMs: number,
): number | null {
  if (ids.firstEntryId === undefined) return null;
  const needed = [values.oldestPendingId, ids.firstUndeliveredId]
    .filter((id): id is string => id !== undefined)
    .sort(compareStreamIds)[0];
  const neededMs = needed === undefined ? nowMs : streamIdMs(needed);
  return Math.max(0, neededMs - streamIdMs(ids.firstEntryId));
}

/** The retry lane's fields of a group's inspection (none without a lane). */
function retryLaneFields(group: ResolvedGroup, values: GroupValues) {
  if (group.retryLaneStream === undefined) return {};
  return {
    retryLaneLength: values.retryLaneLength ?? 0,
    retryLane: {
      stream: group.retryLaneStream,
      length: values.retryLaneLength ?? 0,
      lag: laneLag(values) ?? null,
      pending: values.retryLaneGroup?.pending ?? null,
    },
  };
}

export function inspectGroup(
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
    retentionHeadroomMs: retentionHeadroomMs(values, ids, nowMs),
    ...retryLaneFields(group, values),
  };
}
