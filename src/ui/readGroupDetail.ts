import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { AdvisoryEventRecord } from "../events/advisoryEventRecord.js";
import { ByteBudget } from "../reads/ByteBudget.js";
import { readConsumers, type ConsumerRow } from "../reads/readConsumers.js";
import { readGroupEvents } from "../reads/readGroupEvents.js";
import { readPageDeadLetters, type PageDeadLetters } from "../reads/readPageDeadLetters.js";
import { readPendingPage, type PendingRow } from "../reads/readPendingPage.js";
import type { RedisClient } from "../redis/RedisClient.js";

/**
 * Every read of the group page is a page: Redis never sends more than these, whatever the size
 * of the PEL, the dead-letter stream or the events stream; whole entries (bodies) only within
 * `bytes` (see ByteBudget).
 */
export const GROUP_PAGE_LIMITS = {
  /** XPENDING - + COUNT: the oldest pending entries (then looked up one by one for ghosts). */
  pending: 50,
  /** Dead letters of the group shown, newest first. */
  deadLetters: 50,
  /** Entries of the dead-letter stream looked at while the group's index is not complete. */
  deadLettersScanned: 1000,
  /** Entries of the events stream looked at (XREVRANGE COUNT), then filtered to the group. */
  eventsScanned: 500,
  /** Events of the group shown. */
  events: 20,
  /** Bytes of whole entries a view reads: ghost checks, unindexed dead letters, bodies. */
  bytes: 1024 * 1024,
} as const;

/** A section of the page that could not be read says why, and the rest of the page still shows. */
export type Section<T> = { ok: true; value: T } | { ok: false; error: string };

export interface GroupDetail {
  consumers: Section<ConsumerRow[]>;
  pending: Section<PendingRow[]>;
  deadLetters: Section<PageDeadLetters>;
  events: Section<AdvisoryEventRecord[]>;
}

/** A read as a page section: its value, or the error's message. */
export async function section<T>(read: () => Promise<T>): Promise<Section<T>> {
  try {
    return { ok: true, value: await read() };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * The group page's reads (one module each in src/reads/), each bounded by GROUP_PAGE_LIMITS,
 * sent together: XINFO CONSUMERS (readConsumers), XPENDING of the oldest page then their ghost
 * checks (readPendingPage), the dead letters (readPageDeadLetters), one XREVRANGE of the events
 * stream (readGroupEvents). Whole entries are read only within one byte budget per
 * view, one entry per command, so no command keeps Redis busy long whatever the entry sizes.
 */
export async function readGroupDetail(
  redis: RedisClient,
  group: ResolvedGroup,
  eventsStream: string,
  options: { showBodies: boolean; before?: string } = { showBodies: false },
): Promise<GroupDetail> {
  const budget = new ByteBudget(GROUP_PAGE_LIMITS.bytes);
  const [consumers, pending, deadLetters, events] = await Promise.all([
    section(() => readConsumers(redis, group)),
    section(() => readPendingPage(redis, group, { count: GROUP_PAGE_LIMITS.pending, budget })),
    section(() =>
      readPageDeadLetters(redis, group, {
        limit: GROUP_PAGE_LIMITS.deadLetters,
        maxScanned: GROUP_PAGE_LIMITS.deadLettersScanned,
        budget,
        showBodies: options.showBodies,
        ...(options.before !== undefined && { before: options.before }),
      }),
    ),
    section(() =>
      readGroupEvents(redis, eventsStream, group, {
        scanned: GROUP_PAGE_LIMITS.eventsScanned,
        shown: GROUP_PAGE_LIMITS.events,
      }),
    ),
  ]);
  return { consumers, pending, deadLetters, events };
}
