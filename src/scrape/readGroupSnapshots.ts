import { Cluster } from "../redis/ioredis.js";
import type { RedisClient } from "../redis/RedisClient.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { ScrapeSnapshot } from "./GroupReading.js";
import { readGroupSnapshotsScripted } from "./readGroupStatsScript.js";
import type { ConsumerReadOptions } from "../scripts/readGroupStats.js";
import { readGroupCommands } from "./readGroupCommands.js";

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
 * Reads everything the scrape-time gauges (and, with `consumers`, the group status) need for
 * every group, all of it bounded by options.timeoutMs: Redis TIME; per stream XLEN and XINFO
 * GROUPS (once however many groups it has; its `pending` is the PEL count); per group the oldest
 * pending entry (XPENDING - + 1: id, owner, idle, deliveries), the XLEN of its dead-letter
 * stream, of its dead-letter index and of its retry lane, and with per-consumer series only the
 * XPENDING summary. None of these returns an entry body, so the cost of a scrape does not depend
 * on the size of the entries (no entry body is read): XRANGE, XREVRANGE and XINFO STREAM are
 * never used, not even inside a script, where a 50 MB body costs Redis about a second to copy.
 * Throws RedisUnavailableError when Redis does not answer; a missing or mistyped key only marks
 * its own groups.
 *
 * Two ways, one reply model and one set of rules (src/README.md "The scrape's reads"):
 * - one server or Sentinel: readGroupStats script calls (readGroupSnapshotsScripted),
 *   GROUPS_PER_SCRIPT groups per call (options.groupsPerCall), unless options.scripted is false;
 * - Redis Cluster, or scripted false: plain commands (readGroupCommands), one pipeline per node
 *   on Cluster, all bounded by the same timeout; a node that does not answer marks only the
 *   groups it serves `unreachable`.
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
  return readGroupCommands(redis, groups, options);
}
