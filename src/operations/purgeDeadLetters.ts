import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import { runPurgeDeadLetters } from "../scripts/purgeDeadLetters.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { DEAD_LETTER_PAGE_SIZE, distinctIds, type DeadLetterReason } from "./deadLetterScan.js";
import { HeldBackTally, type HeldBack } from "./HeldBackTally.js";
import type { Progress } from "../core/Progress.js";
import { deadLetterRangeEnd } from "./deadLetterRangeEnd.js";

export interface PurgeOptions {
  /** Only dead letters added at least this long ago (by their id, on the Redis clock). */
  olderThanMs: number | undefined;
  reason: DeadLetterReason | undefined;
  /** Only these dead letters (`--id`); undefined: every dead letter the filters select. */
  ids?: readonly string[];
  dryRun: boolean;
  progress?: Progress;
  pageSize?: number;
  /** Stops at the next page boundary (SIGINT/SIGTERM): each page is one script, done or not. */
  signal?: AbortSignal;
}

/**
 * `--json`: what was purged and what remains, plus the groups of the dead-letter stream that held
 * dead letters back (when some did) and, with `--id`, the ids that are not the group's dead letters.
 */
export interface PurgeSummary {
  purged: number;
  remaining: number;
  dryRun: boolean;
  heldBackBy?: HeldBack[];
  unknownIds?: string[];
}

interface PurgeRange {
  deleted: number;
  /** Deleted plus held back: every selected dead letter. */
  selected: number;
  heldBack: HeldBackTally;
  unknownIds: string[];
}

async function purgeRange(
  redis: ScriptedRedis,
  group: ResolvedGroup,
  endId: string,
  reason: DeadLetterReason | undefined,
  dryRun: boolean,
  pageSize: number,
  progress: Progress | undefined,
  ids?: readonly string[],
  signal?: AbortSignal,
): Promise<PurgeRange> {
  let cursor = "0-0";
  const result: PurgeRange = {
    deleted: 0,
    selected: 0,
    heldBack: new HeldBackTally(),
    unknownIds: [],
  };
  // With ids, one call per page of ids; else pages of the range until the script says done.
  const idPages = ids === undefined ? undefined : distinctIds(ids);
  for (let first = 0; ; first += pageSize) {
    const chunk = idPages?.slice(first, first + pageSize) ?? [];
    const page = await runPurgeDeadLetters(redis, {
      deadLetterStream: group.deadLetterStream,
      stream: group.stream,
      group: group.group,
      reason,
      cursor,
      endId,
      scanLimit: pageSize,
      limit: pageSize,
      dryRun,
      ids: chunk,
    });
    result.deleted += page.deleted;
    result.selected += page.deleted + page.held;
    result.heldBack.add(page.heldBackBy);
    result.unknownIds.push(...page.unknownIds);
    cursor = page.nextCursor;
    progress?.update(result.deleted);
    if (idPages === undefined ? page.done : first + pageSize >= idPages.length) return result;
    if (signal?.aborted === true) return result;
  }
}

/** Every dead letter of the group (and reason) still there, whether it may go or not. */
async function countAll(
  redis: ScriptedRedis,
  group: ResolvedGroup,
  options: PurgeOptions,
  pageSize: number,
): Promise<number> {
  const all = await purgeRange(redis, group, "+", options.reason, true, pageSize, undefined);
  return all.selected;
}

/**
 * Deletes the group's dead letters (of one reason, older than a threshold, or by id), one script
 * call per page (scripts/purgeDeadLetters.lua). Dead letters of other groups sharing the
 * dead-letter stream are left alone, and so are those a consumer group of the dead-letter stream
 * still needs (pending there, or not yet delivered). Only those that existed when the purge
 * started are considered.
 */
export async function purgeDeadLetters(
  redis: ScriptedRedis,
  group: ResolvedGroup,
  options: PurgeOptions,
): Promise<PurgeSummary> {
  const pageSize = options.pageSize ?? DEAD_LETTER_PAGE_SIZE;
  const { ids } = options;
  const unknown = (range: PurgeRange) =>
    ids === undefined ? {} : { unknownIds: range.unknownIds };
  const end = await deadLetterRangeEnd(redis, group, options.olderThanMs);
  if (end === "empty") {
    return {
      purged: 0,
      remaining: 0,
      dryRun: options.dryRun,
      ...(ids && { unknownIds: [...distinctIds(ids)] }),
    };
  }
  if (end === "before-epoch") {
    return {
      purged: 0,
      remaining: await countAll(redis, group, options, pageSize),
      dryRun: options.dryRun,
    };
  }
  const { endId } = end;
  const dry = await purgeRange(redis, group, endId, options.reason, true, pageSize, undefined, ids);
  if (options.dryRun) {
    return {
      purged: dry.deleted,
      remaining: (await countAll(redis, group, options, pageSize)) - dry.deleted,
      dryRun: true,
      ...dry.heldBack.field(),
      ...unknown(dry),
    };
  }
  const range = { endId, expected: dry.deleted, pageSize };
  const done = await purgeWithProgress(redis, group, range, options);
  return {
    purged: done.deleted,
    remaining: await countAll(redis, group, options, pageSize),
    dryRun: false,
    ...done.heldBack.field(),
    ...unknown(done),
  };
}

/** The purge itself, its progress bar started at `expected` (the dry run's) and stopped after. */
async function purgeWithProgress(
  redis: ScriptedRedis,
  group: ResolvedGroup,
  range: { endId: string; expected: number; pageSize: number },
  options: PurgeOptions,
): Promise<PurgeRange> {
  const { endId, expected, pageSize } = range;
  options.progress?.start(expected);
  try {
    return await purgeRange(
      redis,
      group,
      endId,
      options.reason,
      false,
      pageSize,
      options.progress,
      options.ids,
      options.signal,
    );
  } finally {
    options.progress?.stop();
  }
}
