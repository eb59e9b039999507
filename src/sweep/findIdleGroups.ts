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

/** A pass's pipelined reads: each command sent once, however many groups ask for it. */
class Reads {
  private readonly commands: Command[] = [];
  private readonly at = new Map<string, number>();
  private readonly parsed = new Map<number, GroupInfo[] | undefined>();
  private replies: PipelineReply[] = [];

  /** The command's position among the replies (the first one's, when queued before). */
  add(command: Command): number {
    const id = command.join(" ");
    const known = this.at.get(id);
    if (known !== undefined) return known;
    this.at.set(id, this.commands.length);
    this.commands.push(command);
    return this.commands.length - 1;
  }

  get size(): number {
    return this.commands.length;
  }

  async run(redis: RedisClient): Promise<void> {
    this.replies = await runReadPipeline(redis, this.commands, PRE_READ_TIMEOUT_MS);
  }

  /** The reply's value, or undefined when Redis answered an error. */
  value(at: number): unknown {
    const reply = this.replies[at];
    return reply === undefined || reply.error !== undefined ? undefined : reply.value;
  }

  /** An XINFO GROUPS reply, parsed once: [] when the stream does not exist; undefined on error. */
  groups(at: number): GroupInfo[] | undefined {
    if (this.parsed.has(at)) return this.parsed.get(at);
    const reply = this.replies[at];
    let groups: GroupInfo[] | undefined;
    if (reply === undefined) groups = undefined;
    else if (reply.error === undefined) groups = parseXinfoGroups(reply.value);
    else groups = redisErrorOf(reply.error)?.code === "NOSUCHKEY" ? [] : undefined;
    this.parsed.set(at, groups);
    return groups;
  }
}

/** Where one group's replies are (positions in Reads). */
interface GroupReads {
  source: number;
  indexState: number;
  floor?: number;
  requeueTarget?: number;
  lane?: number;
  carried: number[];
  slotFence?: number;
}

/** The script keeps carried counts (and starts them at its first call) only with backoff. */
function hasBackoff(group: ResolvedGroup): boolean {
  const { tiers, jitterPermille } = backoffPolicy(group);
  return jitterPermille > 0 || tiers.length > 1 || tiers[0] !== group.minIdleMs;
}

/** Queues the reads that tell whether `group` is idle. */
function queueReads(reads: Reads, group: ResolvedGroup, fence: Fence | undefined): GroupReads {
  const index = deadLetterIndexKeys(group);
  const at: GroupReads = {
    source: reads.add(["XINFO", "GROUPS", group.stream]),
    indexState: reads.add(["HGET", index.state, "complete"]),
    carried: [],
  };
  if (group.action === "monitor") return at;
  at.floor = reads.add(["GET", index.floor]);
  if (group.action === "requeue")
    at.requeueTarget = reads.add(["XINFO", "GROUPS", group.requeueStream]);
  const lane = group.retryLaneStream;
  if (lane !== undefined) at.lane = reads.add(["XINFO", "GROUPS", lane]);
  if (hasBackoff(group)) {
    for (const stream of lane === undefined ? [group.stream] : [group.stream, lane]) {
      at.carried.push(reads.add(["EXISTS", carriedCountsKey(stream, group.group)]));
    }
  }
  if (fence?.slotToken !== undefined) {
    at.slotFence = reads.add(["GET", slotFenceKey(group.stream, fence.key)]);
  }
  return at;
}

/** The lane is there, read by its own group alone, with nothing pending. */
function laneIdle(readers: GroupInfo[] | undefined, group: string): boolean {
  return readers?.length === 1 && readers[0]?.name === group && readers[0].pending === 0;
}

/**
 * Whether the reads prove that a sweep of `group` would change nothing and report nothing; the
 * floor of its dead-letter stream, when one is set, is checked apart (checkFloors).
 */
function idleByReads(
  reads: Reads,
  group: ResolvedGroup,
  at: GroupReads,
  fence: Fence | undefined,
): boolean {
  const source = reads.groups(at.source)?.find((info) => info.name === group.group);
  // Missing or mistyped: swept, so the failure is reported exactly as the sweep words it.
  if (source === undefined) return false;
  if (reads.value(at.indexState) !== "1") return false;
  if (group.action === "monitor") return true;
  if (source.pending > 0) return false;
  if (at.requeueTarget !== undefined) {
    const readers = reads.groups(at.requeueTarget);
    // A refusal is reported whether or not anything is pending, as the sweep does.
    const names = readers?.map((info) => info.name);
    if (names === undefined || conflictAmong(group, names) !== undefined) return false;
  }
  // A lane deleted or without its group is created again by the sweep (before any copy), and
  // one read by other groups is refused by it.
  if (at.lane !== undefined && !laneIdle(reads.groups(at.lane), group.group)) return false;
  if (at.carried.some((position) => reads.value(position) !== 1)) return false;
  if (fence?.slotToken === undefined) return true;
  // Redis Cluster: the stream's fence must already hold our token (the sweep raises it).
  const stored = at.slotFence === undefined ? undefined : reads.value(at.slotFence);
  return slotRefusal(group) === undefined && stored === String(fence.slotToken);
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
  const none = (): boolean[] => groups.map(() => false);
  const reads = new Reads();
  const lease = fence !== undefined && fence.slotToken === undefined;
  const leaseAt = lease ? reads.add(["GET", fence.key]) : -1;
  const positions = groups.map((group) => queueReads(reads, group, fence));
  try {
    await reads.run(redis);
  } catch {
    return none();
  }
  // A lost lease: every group is swept, so the first script refused ends the pass as fenced.
  if (lease && reads.value(leaseAt) !== fence.value) return none();
  const idle = groups.map((group, i) => {
    const at = positions[i];
    return at !== undefined && idleByReads(reads, group, at, fence);
  });
  return checkFloors(groups, idle, positions, reads, redis).catch(none);
}

/**
 * Dead letters that deadLetterMaxLen dropped leave every index of their stream at the group's
 * next sweep call: an idle group whose dead-letter stream has a floor (it ever dropped some) and
 * whose index still holds an entry below it is swept (one XRANGE of an index entry, no body,
 * only where a floor was ever set).
 */
async function checkFloors(
  groups: readonly ResolvedGroup[],
  idle: boolean[],
  positions: readonly GroupReads[],
  reads: Reads,
  redis: RedisClient,
): Promise<boolean[]> {
  const below = new Reads();
  const asked = groups.map((group, i) => {
    const at = positions[i]?.floor;
    if (idle[i] !== true || at === undefined) return -1;
    const floor = reads.value(at);
    if (floor === null) return -1;
    if (typeof floor !== "string") {
      idle[i] = false; // the floor could not be read: the sweep reports why
      return -1;
    }
    return below.add(["XRANGE", deadLetterIndexKeys(group).index, "-", `(${floor}`, "COUNT", 1]);
  });
  if (below.size === 0) return idle;
  await below.run(redis);
  return idle.map((isIdle, i) => {
    const at = asked[i] ?? -1;
    if (at < 0) return isIdle;
    const entries = below.value(at);
    return Array.isArray(entries) && entries.length === 0;
  });
}
