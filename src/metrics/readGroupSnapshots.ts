import { Cluster } from "ioredis";
import type { RedisClient } from "../redis/scriptedRedis.js";
import { runReadPipeline } from "./runReadPipeline.js";
import type { ResolvedGroup } from "../sweep/resolveGroup.js";
import {
  RedisUnavailableError,
  replyValue,
  type Command,
  type PipelineReply,
} from "./runPipeline.js";
import {
  classifyReadError,
  isReplyError,
  parseFirstId,
  parseGroupInfo,
  parsePendingPage,
  parsePendingSummary,
  parseRedisTime,
  type ReadProblem,
} from "./streamReplies.js";

/** What one scrape learned about one group, straight from Redis. */
export interface GroupValues {
  /** XPENDING summary count. */
  pending: number;
  /** Smallest pending id (undefined: empty PEL). */
  oldestPendingId: string | undefined;
  /** Idle time and delivery count of that entry (0 with an empty PEL). */
  oldestPendingIdleMs: number;
  oldestPendingDeliveries: number;
  /** [consumer, pending] for every consumer with pending entries. */
  consumers: [string, number][];
  /** XINFO GROUPS lag, null when Redis reports null or has no such field. */
  lag: number | null;
  lastDeliveredId: string;
  /** First entry after last-delivered-id (undefined: the group has read everything). */
  firstUndeliveredId: string | undefined;
  /** First entry of the stream (undefined: empty stream). */
  firstEntryId: string | undefined;
  /** XLEN of the dead-letter stream; undefined when that key is not a stream. */
  deadLetterLength: number | undefined;
}

export type GroupReading =
  | { group: ResolvedGroup; state: "ok"; values: GroupValues }
  | { group: ResolvedGroup; state: ReadProblem; detail: string };

export interface ScrapeSnapshot {
  /** Redis TIME, Unix ms: ages are measured on the clock that minted the ids. */
  nowMs: number;
  /** XLEN of every configured stream that exists and is a stream. */
  streamLengths: Map<string, number>;
  groups: GroupReading[];
}

/** Collects commands and hands back each one's reply by the index add() returned. */
class Batch {
  readonly commands: Command[] = [];
  private replies: PipelineReply[] = [];
  private readonly byKey = new Map<string, number>();

  /** Identical commands (several groups on one stream) are sent once. */
  add(...command: Command): number {
    const key = command.join("\u0000");
    const known = this.byKey.get(key);
    if (known !== undefined) return known;
    this.commands.push(command);
    this.byKey.set(key, this.commands.length - 1);
    return this.commands.length - 1;
  }

  async run(redis: RedisClient, deadline: number): Promise<void> {
    this.replies = await runReadPipeline(redis, this.commands, deadline - performance.now());
    // A connection that dies halfway fails the commands it still owed with non-Redis errors.
    // On Cluster those are the commands of one node: only the groups it serves lose their samples.
    const broken = this.replies.find((reply) => reply.error && !isReplyError(reply.error));
    if (broken?.error && !(redis instanceof Cluster))
      throw new RedisUnavailableError(broken.error.message);
  }

  reply(index: number): PipelineReply {
    const reply = this.replies[index];
    if (reply === undefined) throw new Error(`no reply at ${index}`);
    return reply;
  }
}

interface FirstPass {
  info: number;
  firstEntry: number;
  deadLetterLength: number;
  summary: number;
  oldest: number;
}

function problem(group: ResolvedGroup, error: unknown): GroupReading {
  const failure = error instanceof Error ? error : new Error(String(error));
  return { group, state: classifyReadError(failure), detail: failure.message };
}

/**
 * Reads everything the scrape-time gauges need for every group in two pipelines, bounded by
 * timeoutMs together: the first asks TIME, XINFO GROUPS, XLEN, the first entry, the XPENDING
 * summary and the oldest pending entry; the second asks for the first undelivered entry, which
 * needs the last-delivered-id from the first. Commands repeated across groups of one stream
 * are sent once. Throws RedisUnavailableError when Redis does not answer; a missing or mistyped
 * key only marks its own groups.
 */
export async function readGroupSnapshots(
  redis: RedisClient,
  groups: readonly ResolvedGroup[],
  timeoutMs: number,
): Promise<ScrapeSnapshot> {
  const deadline = performance.now() + timeoutMs;
  const first = new Batch();
  const time = first.add("TIME");
  const streamLength = new Map<string, number>();
  const passes = groups.map((group): FirstPass => {
    const { stream } = group;
    streamLength.set(stream, first.add("XLEN", stream));
    return {
      info: first.add("XINFO", "GROUPS", stream),
      firstEntry: first.add("XRANGE", stream, "-", "+", "COUNT", 1),
      deadLetterLength: first.add("XLEN", group.deadLetterStream),
      summary: first.add("XPENDING", stream, group.group),
      oldest: first.add("XPENDING", stream, group.group, "-", "+", 1),
    };
  });
  // On Cluster a silent node makes the first pass wait until its deadline; the other nodes'
  // second pass must still fit, so the first pass gets half of the budget there.
  await first.run(redis, redis instanceof Cluster ? deadline - timeoutMs / 2 : deadline);
  const nowMs = parseRedisTime(replyValue(first.reply(time)));

  const second = new Batch();
  type Pending = { group: ResolvedGroup; values: GroupValues; next: number };
  const partial = groups.map((group, index): GroupReading | Pending => {
    const pass = passes[index];
    if (pass === undefined) throw new Error("unreachable");
    try {
      const info = parseGroupInfo(replyValue(first.reply(pass.info)), group.group);
      if (info === undefined) {
        return { group, state: "no-group", detail: `no group ${group.group} on ${group.stream}` };
      }
      const summary = parsePendingSummary(replyValue(first.reply(pass.summary)));
      const [oldest] = parsePendingPage(replyValue(first.reply(pass.oldest)));
      const deadLetter = first.reply(pass.deadLetterLength);
      const values: GroupValues = {
        pending: summary.count,
        oldestPendingId: summary.minId,
        oldestPendingIdleMs: oldest?.idleMs ?? 0,
        oldestPendingDeliveries: oldest?.deliveries ?? 0,
        consumers: summary.consumers,
        lag: info.lag,
        lastDeliveredId: info.lastDeliveredId,
        firstUndeliveredId: undefined,
        firstEntryId: parseFirstId(replyValue(first.reply(pass.firstEntry))),
        deadLetterLength: deadLetter.error ? undefined : Number(deadLetter.value),
      };
      // Exclusive start (6.2+): the entry right after the last one delivered to the group.
      const next = second.add("XRANGE", group.stream, `(${info.lastDeliveredId}`, "+", "COUNT", 1);
      return { group, values, next };
    } catch (error) {
      return problem(group, error);
    }
  });
  await second.run(redis, deadline);

  const readings = partial.map((reading): GroupReading => {
    if (!("next" in reading)) return reading;
    const { group } = reading;
    const reply = second.reply(reading.next);
    // Past the largest possible id there is nothing left to deliver; Redis calls that range invalid.
    if (reply.error && !/invalid start ID/iu.test(reply.error.message))
      return problem(group, reply.error);
    const firstUndeliveredId = reply.error ? undefined : parseFirstId(reply.value);
    return { group, state: "ok", values: { ...reading.values, firstUndeliveredId } };
  });

  // XLEN of a missing key is 0: only a stream that exists gets a length sample.
  const missing = new Set(
    readings.filter((r) => r.state === "no-stream").map((r) => r.group.stream),
  );
  const streamLengths = new Map<string, number>();
  for (const [stream, index] of streamLength) {
    const reply = first.reply(index);
    if (!reply.error && !missing.has(stream)) streamLengths.set(stream, Number(reply.value));
  }
  return { nowMs, streamLengths, groups: readings };
}
