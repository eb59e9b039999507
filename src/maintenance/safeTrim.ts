import type { Fence } from "../core/fence.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import { runSafeTrim, type TrimBlocker } from "../scripts/safeTrim.js";
import type { Progress } from "../core/Progress.js";

export interface TrimRequest {
  stream: string;
  /** Keep at most this many entries (undefined: no limit). */
  maxLen: number | undefined;
  /** Remove entries older than this on the Redis clock (undefined: no limit). */
  maxAgeMs: number | undefined;
  dryRun: boolean;
  /** The daemon trims under the lease; the operator command runs unfenced. */
  fence?: Fence | undefined;
  /** Entries removed per script call (bounds how long one call blocks Redis). */
  pageSize?: number;
  /** Stop after about this many entries (the daemon's per-pass budget); the rest waits. */
  maxRemoved?: number;
  /** Stops at the next page boundary. */
  signal?: AbortSignal;
  progress?: Progress;
}

export interface TrimSummary {
  stream: string;
  removed: number;
  /** XLEN after the trim (in a dry run: as it would be). */
  length: number;
  /** The groups that held the trim back; empty when the policy was met. */
  blockedBy: TrimBlocker[];
  /** The oldest id any group needs ("" when none needs anything). */
  floorId: string;
  dryRun: boolean;
}

const TRIM_PAGE_SIZE = 1000;

/**
 * Trims the head of a stream toward maxLen / maxAgeMs, one page per script call
 * (scripts/safeTrim.lua), never past the oldest id any group of the stream still needs. A dry
 * run pages through the same decisions without writing.
 */
export async function safeTrim(redis: ScriptedRedis, request: TrimRequest): Promise<TrimSummary> {
  const pageSize = request.pageSize ?? TRIM_PAGE_SIZE;
  const summary: TrimSummary = {
    stream: request.stream,
    removed: 0,
    length: 0,
    blockedBy: [],
    floorId: "",
    dryRun: request.dryRun,
  };
  let after: string | undefined;
  request.progress?.start(Math.max(0, await estimateExcess(redis, request)));
  try {
    for (;;) {
      const page = await runSafeTrim(redis, {
        stream: request.stream,
        maxLen: request.maxLen,
        maxAgeMs: request.maxAgeMs,
        pageSize,
        dryRun: request.dryRun,
        countedBefore: summary.removed,
        after,
        fence: request.fence,
      });
      summary.removed += page.removed;
      summary.floorId = page.floorId;
      request.progress?.update(summary.removed);
      if (page.removed < page.wanted) summary.blockedBy = page.blockedBy;
      if (!page.more || request.signal?.aborted === true) break;
      if (summary.removed >= (request.maxRemoved ?? Number.POSITIVE_INFINITY)) break;
      if (request.dryRun) after = page.lastRemovedId;
    }
  } finally {
    request.progress?.stop();
  }
  const length = Number(await redis.call("XLEN", request.stream));
  summary.length = request.dryRun ? length - summary.removed : length;
  return summary;
}

/** For the progress bar only: what maxLen alone asks for (the age limit is known page by page). */
async function estimateExcess(redis: ScriptedRedis, request: TrimRequest): Promise<number> {
  if (request.progress === undefined || request.maxLen === undefined) return 0;
  const length = Number(await redis.call("XLEN", request.stream).catch(() => 0));
  return length - request.maxLen;
}
