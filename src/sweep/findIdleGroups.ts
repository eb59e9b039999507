import { backoffPolicy } from "../core/backoffThreshold.js";
import { deadLetterIndexKeys } from "../core/deadLetterIndex.js";
import { slotFenceKey, type Fence } from "../core/fence.js";
import { carriedCountsKey, type ResolvedGroup } from "../core/resolveGroup.js";
import { slotRefusal } from "../core/slotRule.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { redisErrorOf } from "../redis/redisErrors.js";
import { parseXinfoGroups, type GroupInfo } from "../redis/replies.js";
import type { Command, PipelineReply } from "../redis/pipeline/runPipeline.js";
import { runReadPipeline } from "../redis/pipeline/runReadPipeline.js";
import { conflictAmong } from "./checkRequeueTarget.js";

/** Bound on all of a pass's pre-reads: past it, every group is swept as if none were idle. */
const PRE_READ_TIMEOUT_MS = 10_000;

/** What a pass's pipelined reads found, by key. */
class Reads {
  private readonly commands: Command[] = [];
  private readonly at = new Map<string, number>();
  private replies: PipelineReply[] = [];

  /** Queues a command once per pass, however many groups ask for it. */
  add(command: Command): void {
    const id = command.join("\u0000");
    if (this.at.has(id)) return;
    this.at.set(id, this.commands.length);
    this.commands.push(command);
  }

  async run(redis: RedisClient): Promise<void> {
    this.replies = await runReadPipeline(redis, this.commands, PRE_READ_TIMEOUT_MS);
  }

  /** The reply's value; undefined when Redis answered an error or the command was not read. */
  value(command: Command): { value: unknown } | undefined {
    const reply = this.replies[this.at.get(command.join("\u0000")) ?? -1];
    return reply === undefined || reply.error !== undefined ? undefined : { value: reply.value };
  }

  /** The groups of a stream's XINFO GROUPS; [] when the stream does not exist; else undefined. */
  groupsOf(stream: string): GroupInfo[] | undefined {
    const command: Command = ["XINFO", "GROUPS", stream];
    const reply = this.replies[this.at.get(command.join("\u0000")) ?? -1];
    if (reply === undefined) return undefined;
    if (reply.error !== undefined) {
      return redisErrorOf(reply.error)?.code === "NOSUCHKEY" ? [] : undefined;
    }
    return parseXinfoGroups(reply.value);
  }
}

const groupsCommand = (stream: string): Command => ["XINFO", "GROUPS", stream];
const indexStateCommand = (group: ResolvedGroup): Command => [
  "HGET",
  deadLetterIndexKeys(group).state,
  "complete",
];
const floorCommand = (group: ResolvedGroup): Command => ["GET", deadLetterIndexKeys(group).floor];
const carriedCommand = (stream: string, group: ResolvedGroup): Command => [
  "EXISTS",
  carriedCountsKey(stream, group.group),
];

/** The script keeps carried counts (and starts them at its first call) only with backoff. */
function hasBackoff(group: ResolvedGroup): boolean {
  const { tiers, jitterPermille } = backoffPolicy(group);
  return jitterPermille > 0 || tiers.length > 1 || tiers[0] !== group.minIdleMs;
}

/** The reads that tell whether `group` is idle (queued once per pass, however often asked). */
function queueReads(reads: Reads, group: ResolvedGroup, fence: Fence | undefined): void {
  reads.add(groupsCommand(group.stream));
  reads.add(indexStateCommand(group));
  if (group.action === "monitor") return;
  reads.add(floorCommand(group));
  if (group.action === "requeue") reads.add(groupsCommand(group.requeueStream));
  if (group.retryLaneStream !== undefined) reads.add(groupsCommand(group.retryLaneStream));
  if (hasBackoff(group)) {
    reads.add(carriedCommand(group.stream, group));
    if (group.retryLaneStream !== undefined)
      reads.add(carriedCommand(group.retryLaneStream, group));
  }
  if (fence?.slotToken !== undefined) reads.add(["GET", slotFenceKey(group.stream, fence.key)]);
}

/** The lane is there, read by its own group alone, with nothing pending. */
function laneIdle(reads: Reads, lane: string, group: string): boolean {
  const readers = reads.groupsOf(lane);
  return readers?.length === 1 && readers[0]?.name === group && readers[0].pending === 0;
}

/**
 * Whether the reads prove that a sweep of `group` would change nothing and report nothing; the
 * floor of its dead-letter stream, when one is set, is checked apart (floorCheck).
 */
function idleByReads(reads: Reads, group: ResolvedGroup, fence: Fence | undefined): boolean {
  const source = reads.groupsOf(group.stream)?.find((info) => info.name === group.group);
  // Missing or mistyped: swept, so the failure is reported exactly as the sweep words it.
  if (source === undefined) return false;
  if (reads.value(indexStateCommand(group))?.value !== "1") return false;
  if (group.action === "monitor") return true;
  if (source.pending > 0) return false;
  if (group.action === "requeue") {
    const readers = reads.groupsOf(group.requeueStream);
    if (readers === undefined) return false;
    // A refusal is reported whether or not anything is pending, as the sweep does.
    if (
      conflictAmong(
        group,
        readers.map((info) => info.name),
      ) !== undefined
    )
      return false;
  }
  const lane = group.retryLaneStream;
  // A lane deleted or without its group is created again by the sweep (before any copy), and
  // one read by other groups is refused by it.
  if (lane !== undefined && !laneIdle(reads, lane, group.group)) return false;
  if (hasBackoff(group)) {
    if (reads.value(carriedCommand(group.stream, group))?.value !== 1) return false;
    if (lane !== undefined && reads.value(carriedCommand(lane, group))?.value !== 1) return false;
  }
  if (fence?.slotToken === undefined) return true;
  // Redis Cluster: the stream's fence must already hold our token (the sweep raises it).
  const stored = reads.value(["GET", slotFenceKey(group.stream, fence.key)])?.value;
  return slotRefusal(group) === undefined && stored === String(fence.slotToken);
}

/** The floor of the group's dead-letter stream, when deadLetterMaxLen ever dropped dead letters. */
function floorOf(reads: Reads, group: ResolvedGroup): string | undefined | false {
  if (group.action === "monitor") return undefined;
  const floor = reads.value(floorCommand(group));
  if (floor === undefined) return false;
  return typeof floor.value === "string" ? floor.value : undefined;
}

/**
 * Which groups a pass may skip: nothing pending, and nothing else a sweep would do or report.
 * One pipelined read per group and per stream instead of a script call and its checks: per
 * stream (source, requeue target, retry lane) XINFO GROUPS once, which says whether the stream
 * and the group exist, what is pending and who else reads a requeue target; per group the
 * dead-letter index state (HGET); per dead-letter stream its index floor (GET); the carried
 * counts (EXISTS) with backoff; the lease (GET) once, or each stream's fence on Cluster. A group
 * that is not proved idle (an error, a refusal, a missing lane or index, a fence to raise) is
 * swept as before, which reports it as before. Never throws: when Redis does not answer the
 * reads, no group is idle and each sweep reports the failure.
 */
export async function findIdleGroups(
  groups: readonly ResolvedGroup[],
  redis: RedisClient,
  fence: Fence | undefined,
): Promise<boolean[]> {
  const reads = new Reads();
  const lease: Command | undefined =
    fence !== undefined && fence.slotToken === undefined ? ["GET", fence.key] : undefined;
  if (lease !== undefined) reads.add(lease);
  for (const group of groups) queueReads(reads, group, fence);
  try {
    await reads.run(redis);
  } catch {
    return groups.map(() => false);
  }
  // A lost lease: every group is swept, so the first script refused ends the pass as fenced.
  if (lease !== undefined && reads.value(lease)?.value !== fence?.value) {
    return groups.map(() => false);
  }
  const idle = groups.map((group) => idleByReads(reads, group, fence));
  return checkFloors(groups, idle, reads, redis);
}

/**
 * Dead letters that deadLetterMaxLen dropped leave every index of their stream at the group's
 * next sweep call: a group whose index still holds one below the floor is swept (one XRANGE of
 * an index entry, no body, only where a floor was ever set).
 */
async function checkFloors(
  groups: readonly ResolvedGroup[],
  idle: boolean[],
  reads: Reads,
  redis: RedisClient,
): Promise<boolean[]> {
  const below = new Reads();
  const asked: (Command | undefined)[] = groups.map((group, i) => {
    if (idle[i] !== true) return undefined;
    const floor = floorOf(reads, group);
    if (floor === false) {
      idle[i] = false;
      return undefined;
    }
    if (floor === undefined) return undefined;
    const command: Command = [
      "XRANGE",
      deadLetterIndexKeys(group).index,
      "-",
      `(${floor}`,
      "COUNT",
      1,
    ];
    below.add(command);
    return command;
  });
  if (asked.every((command) => command === undefined)) return idle;
  try {
    await below.run(redis);
  } catch {
    return groups.map(() => false);
  }
  return idle.map((isIdle, i) => {
    const command = asked[i];
    if (command === undefined) return isIdle;
    const entries = below.value(command)?.value;
    return Array.isArray(entries) && entries.length === 0;
  });
}
