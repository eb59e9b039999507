import type { Fence } from "../core/fence.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import { fenceArguments } from "../core/fence.js";
import type { Progress } from "../core/Progress.js";

export interface TrimRequest {
  stream: string;
  /** Keep at most this many entries (undefined: no limit). */
  maxLen: number | undefined;
  /** Remove entries older than this on the Redis clock (0: no limit). */
  maxAgeMs: number;
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

export interface TrimBlocker {
  group: string;
  /** The oldest id this group still needs (its oldest pending, or its first undelivered). */
  neededFromId: string;
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

export const TRIM_PAGE_SIZE = 1000;

interface TrimPage {
  removed: number;
  wanted: number;
  lastRemovedId: string;
  floorId: string;
  blockedBy: TrimBlocker[];
  more: boolean;
}

function parseTrimPage(reply: unknown): TrimPage {
  if (!Array.isArray(reply) || reply.length < 6 || !Array.isArray(reply[4])) {
    throw new Error(`unexpected safeTrim reply: ${JSON.stringify(reply)}`);
  }
  const flat = reply[4].map(String);
  const blockedBy: TrimBlocker[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    blockedBy.push({ group: flat[i] ?? "", neededFromId: flat[i + 1] ?? "" });
  }
  return {
    removed: Number(reply[0]),
    wanted: Number(reply[1]),
    lastRemovedId: String(reply[2]),
    floorId: String(reply[3]),
    blockedBy,
    more: Number(reply[5]) === 1,
  };
}

/**
 * Trims the head of a stream toward maxLen / maxAgeMs, one page per script call
 * (scripts/safeTrim.lua), never past the oldest id any group of the stream still needs. A dry
 * run pages through the same decisions without writing.
 */
export async function safeTrim(redis: ScriptedRedis, request: TrimRequest): Promise<TrimSummary> {
  // One server: the lease; Redis Cluster: the fence in the stream's own slot (slotFence.ts).
  const fence =
    request.fence === undefined ? undefined : fenceArguments(request.fence, request.stream);
  const keys = [request.stream, ...(fence === undefined ? [] : [fence.key])];
  const pageSize = request.pageSize ?? TRIM_PAGE_SIZE;
  const summary: TrimSummary = {
    stream: request.stream,
    removed: 0,
    length: 0,
    blockedBy: [],
    floorId: "",
    dryRun: request.dryRun,
  };
  let cursor = "-";
  request.progress?.start(Math.max(0, await estimateExcess(redis, request)));
  try {
    for (;;) {
      const page = parseTrimPage(
        await redis.sjSafeTrim(
          keys.length,
          ...keys,
          request.maxLen ?? -1,
          request.maxAgeMs,
          pageSize,
          request.dryRun ? "1" : "0",
          fence?.value ?? "",
          request.dryRun ? summary.removed : 0,
          cursor,
        ),
      );
      summary.removed += page.removed;
      summary.floorId = page.floorId;
      request.progress?.update(summary.removed);
      if (page.removed < page.wanted) summary.blockedBy = page.blockedBy;
      if (!page.more || request.signal?.aborted === true) break;
      if (summary.removed >= (request.maxRemoved ?? Number.POSITIVE_INFINITY)) break;
      if (request.dryRun) cursor = page.lastRemovedId;
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
