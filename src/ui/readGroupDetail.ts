import type { ResolvedGroup } from "../core/resolveGroup.js";
import { parseEventEntry, type AdvisoryEventRecord } from "../events/advisoryEventRecord.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { asArray, kvList, parsePendingPage, type PendingEntry } from "../redis/replies.js";
import { ByteBudget, entryBytes } from "./ByteBudget.js";
import { readPageDeadLetters, type PageDeadLetters } from "./readPageDeadLetters.js";

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

export interface ConsumerRow {
  name: string;
  pending: number;
  /** Since the consumer's last read attempt (XINFO CONSUMERS idle). */
  idleMs: number;
  /** Since its last successful read (7.2+); undefined on servers without it. */
  inactiveMs: number | undefined;
}

export interface PendingRow extends PendingEntry {
  /** True when the entry is gone from the stream (a ghost); undefined: not checked (budget). */
  ghost: boolean | undefined;
}

/** A section of the page that could not be read says why, and the rest of the page still shows. */
export type Section<T> = { ok: true; value: T } | { ok: false; error: string };

export interface GroupDetail {
  consumers: Section<ConsumerRow[]>;
  pending: Section<PendingRow[]>;
  deadLetters: Section<PageDeadLetters>;
  events: Section<AdvisoryEventRecord[]>;
}

async function section<T>(read: () => Promise<T>): Promise<Section<T>> {
  try {
    return { ok: true, value: await read() };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

function parseConsumers(reply: unknown): ConsumerRow[] {
  return asArray(reply, "XINFO CONSUMERS").map((row) => {
    const fields = kvList(row, "XINFO CONSUMERS entry");
    const inactive = fields.get("inactive");
    return {
      name: String(fields.get("name")),
      pending: Number(fields.get("pending")),
      idleMs: Number(fields.get("idle")),
      inactiveMs: inactive === undefined ? undefined : Number(inactive),
    };
  });
}

/**
 * The oldest pending entries, each looked up with XRANGE id id, oldest first: a ghost's lookup
 * finds nothing and costs nothing, so ids below the stream's first entry (trimmed away) are all
 * found. The first entry found alive is read whole; later ones only while the byte budget lasts
 * (Redis cannot tell an entry's existence without copying it), the rest are not checked.
 */
async function readPending(
  redis: RedisClient,
  group: ResolvedGroup,
  budget: ByteBudget,
): Promise<PendingRow[]> {
  const page = parsePendingPage(
    await redis.call("XPENDING", group.stream, group.group, "-", "+", GROUP_PAGE_LIMITS.pending),
  );
  const rows: PendingRow[] = [];
  let aliveSeen = false;
  for (const entry of page) {
    if (aliveSeen && !budget.left) {
      rows.push({ ...entry, ghost: undefined });
      continue;
    }
    const [found] = (await redis.xrangeBuffer(group.stream, entry.id, entry.id)) as [
      Buffer,
      Buffer[],
    ][];
    if (found !== undefined) {
      aliveSeen = true;
      budget.spend(entryBytes(...found));
    }
    rows.push({ ...entry, ghost: found === undefined });
  }
  return rows;
}

async function readEvents(
  redis: RedisClient,
  eventsStream: string,
  group: ResolvedGroup,
): Promise<AdvisoryEventRecord[]> {
  if (eventsStream === "") return [];
  const reply = asArray(
    await redis.call("XREVRANGE", eventsStream, "+", "-", "COUNT", GROUP_PAGE_LIMITS.eventsScanned),
    "XREVRANGE",
  );
  const events: AdvisoryEventRecord[] = [];
  for (const entry of reply) {
    const [id, fields] = asArray(entry, "XREVRANGE entry");
    const event = parseEventEntry(String(id), asArray(fields, "XREVRANGE fields").map(String));
    if (event.stream === group.stream && event.group === group.group) events.push(event);
    if (events.length >= GROUP_PAGE_LIMITS.events) break;
  }
  return events;
}

/**
 * The group page's reads, each bounded (GROUP_PAGE_LIMITS), sent together: XINFO CONSUMERS,
 * XPENDING of the oldest page then their ghost checks, the dead letters (readPageDeadLetters),
 * one XREVRANGE of the events stream. Whole entries are read only within one byte budget per
 * view, one entry per command, so no command keeps Redis busy long whatever the entry sizes.
 * XINFO CONSUMERS has no COUNT: its size is the group's consumers, which the scrape's reads
 * already assume to be modest.
 */
export async function readGroupDetail(
  redis: RedisClient,
  group: ResolvedGroup,
  eventsStream: string,
  options: { showBodies: boolean } = { showBodies: false },
): Promise<GroupDetail> {
  const budget = new ByteBudget(GROUP_PAGE_LIMITS.bytes);
  const [consumers, pending, deadLetters, events] = await Promise.all([
    section(async () =>
      parseConsumers(await redis.call("XINFO", "CONSUMERS", group.stream, group.group)),
    ),
    section(() => readPending(redis, group, budget)),
    section(() =>
      readPageDeadLetters(redis, group, {
        limit: GROUP_PAGE_LIMITS.deadLetters,
        maxScanned: GROUP_PAGE_LIMITS.deadLettersScanned,
        budget,
        showBodies: options.showBodies,
      }),
    ),
    section(() => readEvents(redis, eventsStream, group)),
  ]);
  return { consumers, pending, deadLetters, events };
}
