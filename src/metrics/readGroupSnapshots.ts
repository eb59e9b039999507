import type { RedisClient } from "../redis/scriptedRedis.js";
import { keySlot } from "../redis/keySlot.js";
import {
  asArray,
  asNumber,
  classifyReplyError,
  isReplyError,
  parsePendingSummary,
  parseRedisTime,
  type ReplyProblem,
} from "../redis/replies.js";
import type { ResolvedGroup } from "../sweep/resolveGroup.js";
import {
  RedisUnavailableError,
  replyValue,
  runPipeline,
  type Command,
  type PipelineReply,
} from "./runPipeline.js";

/** What one scrape learned about one group, straight from Redis, without reading any entry. */
export interface GroupValues {
  /** PEL count (XINFO GROUPS pending). */
  pending: number;
  /** Smallest pending id (undefined: empty PEL). */
  oldestPendingId: string | undefined;
  /** Idle time and delivery count of that entry (0 with an empty PEL). */
  oldestPendingIdleMs: number;
  oldestPendingDeliveries: number;
  /** [consumer, pending] for every consumer with pending entries (with per-consumer series). */
  consumers: [string, number][];
  /** XINFO GROUPS lag as Redis reports it: null when null or absent. */
  lag: number | null;
  lastDeliveredId: string;
  /** XLEN of the stream. */
  streamLength: number;
  /** XLEN of the dead-letter stream; undefined when that key is not a stream. */
  deadLetterLength: number | undefined;
}

export type GroupReading =
  | { group: ResolvedGroup; state: "ok"; values: GroupValues }
  | { group: ResolvedGroup; state: ReplyProblem; detail: string };

export interface ScrapeSnapshot {
  /** Redis TIME, Unix ms: ages are measured on the clock that minted the ids. */
  nowMs: number;
  /** XLEN of every configured stream that exists and is a stream. */
  streamLengths: Map<string, number>;
  groups: GroupReading[];
}

/** The configured groups of one stream, read by one script call. */
interface StreamRead {
  stream: string;
  groups: ResolvedGroup[];
  call: number;
}

interface GroupSlots {
  read: StreamRead;
  /** Position of the group in its stream's script reply. */
  position: number;
  /** XLEN of a dead-letter stream outside the stream's hash slot, sent on its own. */
  deadLetterLength: number | undefined;
  /** Only with per-consumer series. */
  summary: number | undefined;
}

function problem(group: ResolvedGroup, error: unknown): GroupReading {
  const failure = error instanceof Error ? error : new Error(String(error));
  return { group, state: classifyReplyError(failure), detail: failure.message };
}

/** The script's arguments for one stream (see readGroupGauges.lua). */
function scriptCall(stream: string, groups: readonly ResolvedGroup[]): Command {
  const keys = [stream];
  const slot = keySlot(stream);
  const keyIndexes = groups.map((group) => {
    if (keySlot(group.deadLetterStream) !== slot) return 0;
    keys.push(group.deadLetterStream);
    return keys.length;
  });
  return [
    "sjReadGroupGauges",
    keys.length,
    ...keys,
    groups.length,
    ...groups.map((group) => group.group),
    ...keyIndexes,
  ];
}

function asGroupValues(reply: unknown, streamLength: number): GroupValues | undefined {
  const fields = asArray(reply, "readGroupGauges group");
  if (fields.length === 0) return undefined;
  const [pending, lastDeliveredId, lag, oldestId, oldestIdle, oldestDeliveries, deadLetter] =
    fields;
  const deadLetterLength = asNumber(deadLetter, "dead-letter length");
  return {
    pending: asNumber(pending, "pending"),
    oldestPendingId: oldestId === "" ? undefined : String(oldestId),
    oldestPendingIdleMs: asNumber(oldestIdle, "idle"),
    oldestPendingDeliveries: asNumber(oldestDeliveries, "deliveries"),
    consumers: [],
    lag: asNumber(lag, "lag") < 0 ? null : asNumber(lag, "lag"),
    lastDeliveredId: String(lastDeliveredId),
    streamLength,
    deadLetterLength: deadLetterLength < 0 ? undefined : deadLetterLength,
  };
}

export interface ReadOptions {
  /** Bound on the whole read. */
  timeoutMs: number;
  /** Read the XPENDING summary too, for the per-consumer counts. */
  perConsumer: boolean;
}

/**
 * Reads everything the scrape-time gauges need for every group in ONE pipeline, bounded by
 * options.timeoutMs: TIME, then one readGroupGauges script call per stream (XLEN, XINFO GROUPS,
 * and per configured group the oldest pending entry and the dead-letter stream's XLEN), plus an
 * XLEN for each dead-letter stream outside its source's hash slot and, with per-consumer series
 * only, each group's XPENDING summary. No command returns an entry body, so the cost of a scrape
 * does not depend on the size of the entries (contract section 5). One call per stream instead
 * of four commands per group: each command costs far more in the client (encoding, decoding,
 * promises) than in Redis. Throws RedisUnavailableError when Redis does not answer; a missing
 * or mistyped key only marks its own groups.
 */
export async function readGroupSnapshots(
  redis: RedisClient,
  groups: readonly ResolvedGroup[],
  options: ReadOptions,
): Promise<ScrapeSnapshot> {
  const commands: Command[] = [["TIME"]];
  const add = (command: Command): number => commands.push(command) - 1;
  const streams = new Map<string, StreamRead>();
  const slots: GroupSlots[] = [];
  for (const group of groups) {
    let read = streams.get(group.stream);
    if (read === undefined) {
      read = { stream: group.stream, groups: [], call: -1 };
      streams.set(group.stream, read);
    }
    read.groups.push(group);
    slots.push({
      read,
      position: read.groups.length - 1,
      deadLetterLength:
        keySlot(group.deadLetterStream) === keySlot(group.stream)
          ? undefined
          : add(["XLEN", group.deadLetterStream]),
      summary: options.perConsumer ? add(["XPENDING", group.stream, group.group]) : undefined,
    });
  }
  for (const read of streams.values()) read.call = add(scriptCall(read.stream, read.groups));

  const replies = await runPipeline(redis, commands, options.timeoutMs);
  // A connection that dies halfway fails the commands it still owed with non-Redis errors.
  for (const reply of replies) {
    if (reply.error && !isReplyError(reply.error))
      throw new RedisUnavailableError(reply.error.message);
  }
  const at = (index: number): PipelineReply => {
    const reply = replies[index];
    if (reply === undefined) throw new Error(`no reply at ${index}`);
    return reply;
  };
  const nowMs = parseRedisTime(replyValue(at(0)));

  // Each stream's reply: its status, then one entry per configured group.
  const streamReplies = new Map<StreamRead, unknown[] | Error>();
  const streamLengths = new Map<string, number>();
  for (const read of streams.values()) {
    try {
      const reply = asArray(replyValue(at(read.call)), "readGroupGauges");
      const [status, length] = reply;
      if (status === "no-stream") throw new Error(`no such key: stream ${read.stream}`);
      if (status === "wrong-type") throw new Error(`WRONGTYPE ${read.stream} is not a stream`);
      streamLengths.set(read.stream, asNumber(length, "XLEN"));
      streamReplies.set(read, reply);
    } catch (error) {
      streamReplies.set(read, error instanceof Error ? error : new Error(String(error)));
    }
  }

  const readings = groups.map((group, index): GroupReading => {
    const slot = slots[index];
    if (slot === undefined) throw new Error("unreachable");
    const reply = streamReplies.get(slot.read);
    if (reply === undefined) throw new Error("unreachable");
    if (reply instanceof Error) return problem(group, reply);
    try {
      const values = asGroupValues(reply[2 + slot.position], streamLengths.get(group.stream) ?? 0);
      if (values === undefined) {
        return { group, state: "no-group", detail: `no group ${group.group} on ${group.stream}` };
      }
      if (slot.deadLetterLength !== undefined) {
        const deadLetter = at(slot.deadLetterLength);
        values.deadLetterLength = deadLetter.error ? undefined : Number(deadLetter.value);
      }
      if (slot.summary !== undefined) {
        values.consumers = parsePendingSummary(replyValue(at(slot.summary))).consumers;
      }
      return { group, state: "ok", values };
    } catch (error) {
      return problem(group, error);
    }
  });
  return { nowMs, streamLengths, groups: readings };
}
