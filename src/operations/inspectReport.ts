import type { JanitorConfig } from "../core/configTypes.js";
import { readGroupSnapshots } from "../scrape/readGroupSnapshots.js";
import { scanGroupPel } from "../scrape/scanGroupPel.js";
import type { GroupReading } from "../scrape/GroupReading.js";
import type { Command, PipelineReply } from "../redis/pipeline/runPipeline.js";
import { runReadPipeline } from "../redis/pipeline/runReadPipeline.js";
import type { RedisClient } from "../redis/RedisClient.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { deadLetterIndexKeys } from "../core/deadLetterIndex.js";
import { leaseCommands, leaseInspection, type LeaseInspection } from "./inspectLease.js";
import { inspectGroup, type GroupInspection } from "./inspectGroup.js";

/** Inspect's PEL scan (for the due entries) stops after this many entries per group. */
const INSPECT_SCAN_LIMIT = 100_000;

export interface InspectReport {
  /** Redis TIME, Unix ms. */
  nowMs: number;
  lease: LeaseInspection;
  groups: GroupInspection[];
  /** Why the groups have no status: no janitor answered, or it refused (absent when one did). */
  statusProblem?: string;
}

/**
 * Unlike the scrape, inspect may read single entries (ids are all it keeps), three per group
 * after the lease's commands: the first dead letter, the stream's first entry and the first
 * entry after the group's last-delivered id.
 */
function entryReads(readings: readonly GroupReading[]): Command[] {
  const commands: Command[] = [];
  for (const reading of readings) {
    const { group } = reading;
    // The group's oldest dead letter: the first entry of its index (an envelope, no body).
    const indexed = reading.state === "ok" && reading.values.deadLettersExact === true;
    const letters = indexed ? deadLetterIndexKeys(group).index : group.deadLetterStream;
    commands.push(["XRANGE", letters, "-", "+", "COUNT", 1]);
    commands.push(["XRANGE", group.stream, "-", "+", "COUNT", 1]);
    const after = reading.state === "ok" ? `(${reading.values.lastDeliveredId}` : "+";
    commands.push(["XRANGE", group.stream, after, "+", "COUNT", 1]);
  }
  return commands;
}

/** The due entries of each group with pending ones, from a bounded scan of its PEL. */
function scanDue(redis: RedisClient, readings: readonly GroupReading[], timeoutMs: number) {
  const never = new AbortController().signal;
  return Promise.all(
    readings.map(async (reading) =>
      reading.state === "ok" && reading.values.pending > 0
        ? await scanGroupPel(redis, reading.group, never, {
            pageTimeoutMs: timeoutMs,
            maxEntries: INSPECT_SCAN_LIMIT,
          })
        : { dueEntries: 0 },
    ),
  );
}

/** The id of the first entry an XRANGE reply holds, if any. */
function firstId(reply: PipelineReply | undefined): string | undefined {
  const entries = reply?.value;
  return Array.isArray(entries) ? (entries[0] as [string, unknown] | undefined)?.[0] : undefined;
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
  const commands: Command[] = [...leaseCommands(config.lease.key), ...entryReads(snapshot.groups)];
  // On Cluster these keys live on several nodes: one pipeline per node (the lease key and its
  // companions share one slot, so the holder record is read from the node holding the lease).
  const replies = await runReadPipeline(redis, commands, timeoutMs);
  const due = await scanDue(redis, snapshot.groups, timeoutMs);
  const lease = leaseInspection(config.lease.key, replies);
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
