import { Cluster } from "../redis/ioredis.js";
import type { RedisClient } from "../redis/RedisClient.js";
import {
  isReplyError,
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
import { snapshotOf, type ScrapeSnapshot } from "./GroupReading.js";
import {
  touchesKeyOf,
  type ConsumerReadOptions,
  type GroupStats,
  type GroupStatsReading,
} from "../scripts/readGroupStats.js";
import { consumerActivity, laneWork } from "../scripts/readGroupStatsParts.js";
import { activityFactsOf, laneFactsOf } from "./commandFacts.js";
import { runReadPipeline } from "../redis/pipeline/runReadPipeline.js";
import { deadLetterIndexKeys } from "../core/deadLetterIndex.js";

/** What the reads without scripts need of ReadOptions (see readGroupSnapshots.ts). */
interface CommandReadOptions {
  timeoutMs: number;
  perConsumer: boolean;
  batchSize?: number | undefined;
  consumers?: ConsumerReadOptions | undefined;
}

/** Where a group's replies are among the pipeline's. */
interface GroupSlots {
  /** Only with per-consumer series: XINFO GROUPS has the count, the oldest entry has the min id. */
  summary: number | undefined;
  oldest: number;
  deadLetterLength: number;
  /** XLEN of the group's dead-letter index, and HGET of its state's `complete`. */
  deadLetters: number;
  deadLettersExact: number;
  /** With a retry lane: its XLEN, its XINFO GROUPS and its group's oldest pending copy there. */
  lane: { length: number; groups: number; oldest: number } | undefined;
  /** XINFO CONSUMERS, only when the read asks for the consumers' activity. */
  consumers: number | undefined;
  /** HGETALL of the touches hash, with the activity of a reassign group only. */
  touches: number | undefined;
}

/** The commands of the read: TIME, per stream XLEN and XINFO GROUPS, then per group its own. */
function planReads(
  groups: readonly ResolvedGroup[],
  options: CommandReadOptions,
): {
  commands: Command[];
  streams: Map<string, { length: number; groups: number }>;
  slots: GroupSlots[];
} {
  const commands: Command[] = [["TIME"]];
  const add = (command: Command): number => commands.push(command) - 1;
  const streams = new Map<string, { length: number; groups: number }>();
  const slots = groups.map((group): GroupSlots => {
    const { stream, retryLaneStream: lane } = group;
    if (!streams.has(stream)) {
      streams.set(stream, {
        length: add(["XLEN", stream]),
        groups: add(["XINFO", "GROUPS", stream]),
      });
    }
    const touches = options.consumers === undefined ? undefined : touchesKeyOf(group);
    return {
      summary: options.perConsumer ? add(["XPENDING", stream, group.group]) : undefined,
      oldest: add(["XPENDING", stream, group.group, "-", "+", 1]),
      deadLetterLength: add(["XLEN", group.deadLetterStream]),
      deadLetters: add(["XLEN", deadLetterIndexKeys(group).index]),
      deadLettersExact: add(["HGET", deadLetterIndexKeys(group).state, "complete"]),
      lane:
        lane === undefined
          ? undefined
          : {
              length: add(["XLEN", lane]),
              groups: add(["XINFO", "GROUPS", lane]),
              oldest: add(["XPENDING", lane, group.group, "-", "+", 1]),
            },
      consumers: options.consumers ? add(["XINFO", "CONSUMERS", stream, group.group]) : undefined,
      touches: touches === undefined ? undefined : add(["HGETALL", touches]),
    };
  });
  return { commands, streams, slots };
}

/** XLEN as a count; undefined when it failed (the key is not a stream). */
function countOf(reply: PipelineReply): number | undefined {
  return reply.error ? undefined : Number(reply.value);
}

/** The group's stats from its replies (throws the error of a read the stats need). */
function statsOf(
  group: ResolvedGroup,
  slot: GroupSlots,
  info: GroupInfo,
  at: (index: number) => PipelineReply,
  read: { nowMs: number; consumers: ConsumerReadOptions | undefined },
): GroupStats {
  const [oldest] = parsePendingPage(replyValue(at(slot.oldest)));
  const consumers =
    slot.summary === undefined ? [] : parsePendingSummary(replyValue(at(slot.summary))).consumers;
  const { lane } = slot;
  const activity =
    slot.consumers === undefined || read.consumers === undefined
      ? undefined
      : consumerActivity(
          activityFactsOf(
            info,
            replyValue(at(slot.consumers)),
            slot.touches === undefined ? undefined : at(slot.touches),
          ),
          read.consumers.janitorConsumer,
          read.nowMs,
        );
  const complete = at(slot.deadLettersExact);
  return {
    pending: info.pending,
    lastDeliveredId: info.lastDeliveredId,
    lag: info.lag,
    oldestPendingId: oldest?.id,
    oldestPendingIdleMs: oldest?.idleMs ?? 0,
    oldestPendingDeliveries: oldest?.deliveries ?? 0,
    deadLetterLength: countOf(at(slot.deadLetterLength)),
    retryLaneLength: lane === undefined ? undefined : countOf(at(lane.length)),
    retryLaneGroup:
      lane === undefined
        ? undefined
        : laneWork(laneFactsOf(group.group, at(lane.groups), at(lane.oldest))),
    consumers,
    ...(activity === undefined ? {} : { activity }),
    deadLetters: countOf(at(slot.deadLetters)),
    deadLettersExact: !complete.error && String(complete.value) === "1",
  };
}

/** A read that failed: unreachable when its node did not answer, else Redis' error. */
function failure(error: unknown): GroupStatsReading {
  const message = error instanceof Error ? error.message : String(error);
  return error instanceof RedisUnavailableError
    ? { status: "unreachable", error: message }
    : { status: "failed", error: message };
}

/**
 * A connection that dies halfway fails the commands it still owed with non-Redis errors. On one
 * server that is Redis not answering (thrown); on Cluster those are the commands of one node:
 * they become RedisUnavailableError, and only the groups it serves lose their samples.
 */
function lostReplies(redis: RedisClient, replies: PipelineReply[]): void {
  const perNode = redis instanceof Cluster;
  for (const [index, reply] of replies.entries()) {
    if (!reply.error || isReplyError(reply.error)) continue;
    if (!perNode) throw new RedisUnavailableError(reply.error.message);
    if (!(reply.error instanceof RedisUnavailableError))
      replies[index] = { error: new RedisUnavailableError(reply.error.message) };
  }
}

/**
 * The reads of readGroupSnapshots as plain commands, for a user without EVAL/EVALSHA and on
 * Redis Cluster: the same facts as readGroupStats.lua, in the same reply model, turned into
 * values by the same rules (src/scripts/readGroupStatsParts.ts).
 */
export async function readGroupCommands(
  redis: RedisClient,
  groups: readonly ResolvedGroup[],
  options: CommandReadOptions,
): Promise<ScrapeSnapshot> {
  const { commands, streams, slots } = planReads(groups, options);
  const replies = await runReadPipeline(redis, commands, options.timeoutMs, options.batchSize);
  lostReplies(redis, replies);
  const at = (index: number): PipelineReply => {
    const reply = replies[index];
    if (reply === undefined) throw new Error(`no reply at ${index}`);
    return reply;
  };
  const nowMs = parseRedisTime(replyValue(at(0)));

  // One parse per stream, however many of its groups are configured.
  const infos = new Map<string, Map<string, GroupInfo> | GroupStatsReading>();
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
      infos.set(stream, failure(error));
    }
  }

  const read = { nowMs, consumers: options.consumers };
  const reads = groups.map((group, index): GroupStatsReading => {
    const slot = slots[index];
    const byName = infos.get(group.stream);
    if (slot === undefined || byName === undefined) throw new Error("unreachable");
    if (!(byName instanceof Map)) return byName;
    const info = byName.get(group.group);
    if (info === undefined) return { status: "no-group" };
    try {
      return { status: "read", stats: statsOf(group, slot, info, at, read) };
    } catch (error) {
      return failure(error);
    }
  });
  return snapshotOf(groups, [{ nowMs, streamLengths, groups: reads }]);
}
