import type { RedisClient } from "../redis/RedisClient.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { parsePendingPage, parseRedisTime, type PendingEntry } from "../redis/replies.js";
import { replyValue } from "../redis/pipeline/runPipeline.js";
import { runReadPipeline } from "../redis/pipeline/runReadPipeline.js";
import { backoffPolicy, dueAfterMs } from "../core/backoffThreshold.js";

/** The exact PEL extremes of one group as of one full scan, and the first id at maxDeliveries. */
export interface PelScanResult {
  /** Redis TIME (Unix ms) when this group's scan started. */
  scannedAtMs: number;
  maxIdleMs: number;
  maxDeliveries: number;
  maxDeliveriesId?: string;
  entries: number;
  /**
   * Entries idle past their claim threshold (minIdleMs, or their backoff tier with its jitter,
   * as sweepPage.lua decides) as of the scan: what the next sweep would claim.
   */
  dueEntries: number;
  /** Set when the scan stopped at its maxEntries bound: the counts cover the first entries only. */
  partial?: true;
}

const DEFAULT_PAGE_SIZE = 1000;
const DEFAULT_PAGE_TIMEOUT_MS = 10_000;

interface PageOptions {
  pageSize?: number | undefined;
  pageTimeoutMs?: number | undefined;
  /** Stop after about this many entries (whole pages); unbounded by default. */
  maxEntries?: number | undefined;
}

/**
 * One group's whole PEL, paged (PelScanner runs it for every group on its cadence): its extremes and due entries. Also run once by
 * `inspect`. undefined when aborted halfway: a partial scan is no maximum.
 */
export async function scanGroupPel(
  redis: RedisClient,
  group: ResolvedGroup,
  signal: AbortSignal,
  {
    pageSize = DEFAULT_PAGE_SIZE,
    pageTimeoutMs = DEFAULT_PAGE_TIMEOUT_MS,
    maxEntries = Infinity,
  }: PageOptions = {},
): Promise<PelScanResult | undefined> {
  const page = (start: string) =>
    ["XPENDING", group.stream, group.group, start, "+", pageSize] as const;
  // TIME travels with the first page (no extra round trip); on Cluster a read follows MOVED/ASK.
  const [time, firstPage] = await runReadPipeline(redis, [["TIME"], page("-")], pageTimeoutMs);
  const result: PelScanResult = {
    scannedAtMs: parseRedisTime(replyValue(time)),
    maxIdleMs: 0,
    maxDeliveries: 0,
    entries: 0,
    dueEntries: 0,
  };
  const policy = backoffPolicy(group);
  let entries: PendingEntry[] = parsePendingPage(replyValue(firstPage));
  for (;;) {
    for (const entry of entries) {
      if (entry.idleMs > result.maxIdleMs) result.maxIdleMs = entry.idleMs;
      if (entry.deliveries > result.maxDeliveries) {
        result.maxDeliveries = entry.deliveries;
        result.maxDeliveriesId = entry.id;
      }
      if (entry.idleMs >= dueAfterMs(policy, entry.id, entry.deliveries)) result.dueEntries += 1;
    }
    result.entries += entries.length;
    const last = entries.at(-1);
    if (entries.length < pageSize || last === undefined) return result;
    if (result.entries >= maxEntries) return { ...result, partial: true };
    if (signal.aborted) return undefined;
    // Exclusive start (6.2+): the next page begins right after the last id seen.
    const [next] = await runReadPipeline(redis, [page(`(${last.id}`)], pageTimeoutMs);
    entries = parsePendingPage(replyValue(next));
  }
}
