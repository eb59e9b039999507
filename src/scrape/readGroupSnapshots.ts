import { Cluster } from "ioredis";
import type { RedisClient } from "../redis/RedisClient.js";
import {
  asArray,
  classifyReplyError,
  isReplyError,
  kvList,
  parsePendingPage,
  parsePendingSummary,
  parseRedisTime,
  parseXinfoGroups,
  type GroupInfo,
} from "../redis/replies.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import {
  RedisUnavailableError,
  replyValue,
  type Command,
  type PipelineReply,
} from "../redis/pipeline/runPipeline.js";
import type { GroupReading, GroupValues, ScrapeSnapshot } from "./GroupReading.js";
import { readGroupSnapshotsScripted } from "./readGroupStatsScript.js";
import { touchesKeyOf, type ConsumerReadOptions } from "../scripts/readGroupStats.js";
import type { ConsumerActivity } from "../scripts/readGroupStatsParts.js";
import { runReadPipeline } from "../redis/pipeline/runReadPipeline.js";
import { deadLetterIndexKeys } from "../core/deadLetterIndex.js";
import { laneGroupFromReplies } from "./retryLaneWork.js";

interface StreamSlots {
  length: number;
  groups: number;
}

interface GroupSlots {
  /** Only with per-consumer series: XINFO GROUPS has the count, the oldest entry has the min id. */
  summary: number | undefined;
  oldest: number;
  deadLetterLength: number;
  /** XLEN of the group's dead-letter index, and HGET of its state's `complete`. */
  deadLetters: number;
  deadLettersExact: number;
  retryLaneLength: number | undefined;
  /** With a retry lane: XINFO GROUPS of the lane and its group's oldest pending copy there. */
  laneGroups: number | undefined;
  laneOldest: number | undefined;
  /** XINFO CONSUMERS, only when the read asks for the consumers' activity. */
  consumers: number | undefined;
  /** HGETALL of the touches hash, with the activity of a reassign group only. */
  touches: number | undefined;
}

/** The activity readGroupStats.lua computes, from XINFO GROUPS and XINFO CONSUMERS replies. */
function activityOf(
  info: GroupInfo,
  consumersReply: unknown,
  options: ConsumerReadOptions,
  handOffs: { nowMs: number; touches: PipelineReply | undefined },
): ConsumerActivity {
  // A consumer whose latest activity is the janitor's XCLAIM to it has not read (same rule as
  // the script and as sweepPage.lua). An unreadable touches hash discounts nothing.
  const touches =
    handOffs.touches === undefined || handOffs.touches.error
      ? []
      : asArray(handOffs.touches.value, "HGETALL");
  const lastTouch = new Map<string, number>();
  for (let i = 0; i + 1 < touches.length; i += 2)
    lastTouch.set(String(touches[i]), Number(touches[i + 1]));
  let consumerCount = 0;
  let minConsumerIdleMs: number | null = null;
  for (const entry of asArray(consumersReply, "XINFO CONSUMERS")) {
    const fields = kvList(entry, "XINFO CONSUMERS");
    const name = String(fields.get("name"));
    const idle = Number(fields.get("idle"));
    if (name === options.janitorConsumer || !Number.isFinite(idle)) continue;
    consumerCount += 1;
    const since = lastTouch.get(name);
    if (since !== undefined && handOffs.nowMs - idle <= since + 1) continue;
    minConsumerIdleMs = minConsumerIdleMs === null ? idle : Math.min(minConsumerIdleMs, idle);
  }
  return { entriesRead: info.entriesRead, consumerCount, minConsumerIdleMs };
}

/** Whether the activity read of this group needs its touches hash (reassign groups only). */
function withTouches(options: ReadOptions, group: ResolvedGroup): boolean {
  return options.consumers !== undefined && touchesKeyOf(group) !== undefined;
}

/** XLEN of a retry lane; undefined without one, or when the key is not a stream. */
function laneLength(reply: PipelineReply | undefined): number | undefined {
  return reply === undefined || reply.error ? undefined : Number(reply.value);
}

function problem(group: ResolvedGroup, error: unknown): GroupReading {
  const failure = error instanceof Error ? error : new Error(String(error));
  if (failure instanceof RedisUnavailableError) {
    return { group, state: "unreachable", detail: failure.message };
  }
  return { group, state: classifyReplyError(failure), detail: failure.message };
}

export interface ReadOptions {
  /** Bound on the whole read. */
  timeoutMs: number;
  /** Read the XPENDING summary too, for the per-consumer counts. */
  perConsumer: boolean;
  /** Commands per pipeline (default: PIPELINE_BATCH_SIZE). */
  batchSize?: number;
  /**
   * false: pipelined commands even on one server (for a user without EVAL/EVALSHA, such as the
   * read-only operator user). Default true: readGroupStats calls, except on Redis Cluster.
   */
  scripted?: boolean;
  /** Groups per script call (default GROUPS_PER_SCRIPT). */
  groupsPerCall?: number;
  /**
   * Also read what the group status needs: XINFO GROUPS entries-read and, per group, XINFO
   * CONSUMERS (one more command per group). A scrape leaves it out and costs what it did.
   */
  consumers?: ConsumerReadOptions | undefined;
}

/**
 * Reads everything the scrape-time gauges need for every group in consecutive pipelines of bounded
 * size (runPipelineBatches), all of them bounded together by options.timeoutMs: TIME; per stream
 * XLEN and XINFO GROUPS (sent once however many groups it has; its `pending` is the PEL count);
 * per group the oldest pending entry (XPENDING - + 1: id, owner, idle, deliveries), the
 * dead-letter stream's XLEN and, with per-consumer series only, the XPENDING summary. Four
 * commands per group on its own stream: each command costs far more in the client (encoding,
 * decoding, promises) than in Redis. None of these returns an entry body, so the cost of a
 * scrape does not depend on the size of the entries (no entry body is read): XRANGE,
 * XREVRANGE and XINFO STREAM are never used, not even inside a script, where a 50 MB body costs
 * Redis about a second to copy. Throws RedisUnavailableError when Redis does not answer; a
 * missing or mistyped key only marks its own groups.
 *
 * One server or Sentinel: the same reads in readGroupStats script calls instead
 * (readGroupSnapshotsScripted), GROUPS_PER_SCRIPT groups per call (options.groupsPerCall),
 * unless options.scripted is false.
 *
 * Redis Cluster: the same commands, one pipeline per node (runReadPipeline), all bounded by the
 * same timeout; a node that does not answer marks only the groups it serves `unreachable`.
 */
export async function readGroupSnapshots(
  redis: RedisClient,
  groups: readonly ResolvedGroup[],
  options: ReadOptions,
): Promise<ScrapeSnapshot> {
  // One script call reads GROUPS_PER_SCRIPT groups: far less client work than four commands each.
  // Not on Cluster, where the keys of one call would have to share a slot.
  if (options.scripted !== false && !(redis instanceof Cluster)) {
    return readGroupSnapshotsScripted(redis, groups, options);
  }
  return readGroupSnapshotsPipelined(redis, groups, options);
}

/** The group's dead-letter count from its index, as readGroupStats.lua reads it. */
function indexedCount(
  length: PipelineReply,
  complete: PipelineReply,
): Pick<GroupValues, "deadLetters" | "deadLettersExact"> {
  return {
    deadLetters: length.error ? undefined : Number(length.value),
    deadLettersExact: !complete.error && String(complete.value) === "1",
  };
}

/** The pipelined reads (see readGroupSnapshots). */
async function readGroupSnapshotsPipelined(
  redis: RedisClient,
  groups: readonly ResolvedGroup[],
  options: ReadOptions,
): Promise<ScrapeSnapshot> {
  const commands: Command[] = [["TIME"]];
  const add = (command: Command): number => commands.push(command) - 1;
  const streams = new Map<string, StreamSlots>();
  const slots: GroupSlots[] = [];
  for (const group of groups) {
    const { stream, retryLaneStream: lane } = group;
    if (!streams.has(stream)) {
      streams.set(stream, {
        length: add(["XLEN", stream]),
        groups: add(["XINFO", "GROUPS", stream]),
      });
    }
    slots.push({
      summary: options.perConsumer ? add(["XPENDING", stream, group.group]) : undefined,
      oldest: add(["XPENDING", stream, group.group, "-", "+", 1]),
      deadLetterLength: add(["XLEN", group.deadLetterStream]),
      deadLetters: add(["XLEN", deadLetterIndexKeys(group).index]),
      deadLettersExact: add(["HGET", deadLetterIndexKeys(group).state, "complete"]),
      retryLaneLength: lane === undefined ? undefined : add(["XLEN", lane]),
      laneGroups: lane === undefined ? undefined : add(["XINFO", "GROUPS", lane]),
      laneOldest:
        lane === undefined ? undefined : add(["XPENDING", lane, group.group, "-", "+", 1]),
      consumers: options.consumers ? add(["XINFO", "CONSUMERS", stream, group.group]) : undefined,
      touches: withTouches(options, group) ? add(["HGETALL", group.touchesKey]) : undefined,
    });
  }
  const replies = await runReadPipeline(redis, commands, options.timeoutMs, options.batchSize);
  // A connection that dies halfway fails the commands it still owed with non-Redis errors. On
  // Cluster those are the commands of one node: only the groups it serves lose their samples.
  const perNode = redis instanceof Cluster;
  for (const [index, reply] of replies.entries()) {
    if (!reply.error || isReplyError(reply.error)) continue;
    if (!perNode) throw new RedisUnavailableError(reply.error.message);
    if (!(reply.error instanceof RedisUnavailableError))
      replies[index] = { error: new RedisUnavailableError(reply.error.message) };
  }
  const at = (index: number): PipelineReply => {
    const reply = replies[index];
    if (reply === undefined) throw new Error(`no reply at ${index}`);
    return reply;
  };
  const nowMs = parseRedisTime(replyValue(at(0)));

  // One parse per stream, however many of its groups are configured.
  const infos = new Map<string, Map<string, GroupInfo> | Error>();
  const streamLengths = new Map<string, number>();
  for (const [stream, slot] of streams) {
    try {
      const byName = new Map<string, GroupInfo>();
      for (const info of parseXinfoGroups(replyValue(at(slot.groups)))) {
        byName.set(info.name, info);
      }
      infos.set(stream, byName);
      // XLEN of a missing key is 0: only a stream that exists gets a length sample.
      streamLengths.set(stream, Number(replyValue(at(slot.length))));
    } catch (error) {
      infos.set(stream, error instanceof Error ? error : new Error(String(error)));
    }
  }

  const readings = groups.map((group, index): GroupReading => {
    const slot = slots[index];
    const byName = infos.get(group.stream);
    if (slot === undefined || byName === undefined) throw new Error("unreachable");
    if (byName instanceof Error) return problem(group, byName);
    const info = byName.get(group.group);
    if (info === undefined) {
      return { group, state: "no-group", detail: `no group ${group.group} on ${group.stream}` };
    }
    try {
      const [oldest] = parsePendingPage(replyValue(at(slot.oldest)));
      const consumers =
        slot.summary === undefined
          ? []
          : parsePendingSummary(replyValue(at(slot.summary))).consumers;
      const deadLetter = at(slot.deadLetterLength);
      const activity =
        slot.consumers === undefined || options.consumers === undefined
          ? undefined
          : activityOf(info, replyValue(at(slot.consumers)), options.consumers, {
              nowMs,
              touches: slot.touches === undefined ? undefined : at(slot.touches),
            });
      const values: GroupValues = {
        pending: info.pending,
        oldestPendingId: oldest?.id,
        oldestPendingIdleMs: oldest?.idleMs ?? 0,
        oldestPendingDeliveries: oldest?.deliveries ?? 0,
        consumers,
        lag: info.lag,
        lastDeliveredId: info.lastDeliveredId,
        streamLength: streamLengths.get(group.stream) ?? 0,
        deadLetterLength: deadLetter.error ? undefined : Number(deadLetter.value),
        ...indexedCount(at(slot.deadLetters), at(slot.deadLettersExact)),
        retryLaneLength: laneLength(
          slot.retryLaneLength === undefined ? undefined : at(slot.retryLaneLength),
        ),
        retryLaneGroup:
          slot.laneGroups === undefined || slot.laneOldest === undefined
            ? undefined
            : laneGroupFromReplies(group.group, at(slot.laneGroups), at(slot.laneOldest)),
        ...(activity === undefined ? {} : { activity }),
      };
      return { group, state: "ok", values };
    } catch (error) {
      return problem(group, error);
    }
  });
  return { nowMs, streamLengths, groups: readings };
}
