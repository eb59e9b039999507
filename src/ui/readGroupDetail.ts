import type { ResolvedGroup } from "../core/resolveGroup.js";
import { parseEventEntry, type AdvisoryEventRecord } from "../events/advisoryEventRecord.js";
import { scanDeadLetters, type DeadLetterScan } from "../reads/listDeadLetters.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { asArray, kvList, parsePendingPage, type PendingEntry } from "../redis/replies.js";
import { runEntriesExist } from "../scripts/entriesExist.js";
import { registerScripts } from "../scripts/scriptedRedis.js";

/**
 * Every read of the group page is a page: Redis never sends more than these, whatever the size
 * of the PEL, the dead-letter stream or the events stream.
 */
export const GROUP_PAGE_LIMITS = {
  /** XPENDING - + COUNT: the oldest pending entries (and one existence script call for them). */
  pending: 50,
  /** Dead letters of the group shown, newest first. */
  deadLetters: 50,
  /** Entries of the dead-letter stream looked at to find them (it may be shared by groups). */
  deadLettersScanned: 1000,
  /** Entries of the events stream looked at (XREVRANGE COUNT), then filtered to the group. */
  eventsScanned: 500,
  /** Events of the group shown. */
  events: 20,
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
  /** True when the entry is gone from the stream (a ghost). */
  ghost: boolean;
}

/** A section of the page that could not be read says why, and the rest of the page still shows. */
export type Section<T> = { ok: true; value: T } | { ok: false; error: string };

export interface GroupDetail {
  consumers: Section<ConsumerRow[]>;
  pending: Section<PendingRow[]>;
  deadLetters: Section<DeadLetterScan>;
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

async function readPending(redis: RedisClient, group: ResolvedGroup): Promise<PendingRow[]> {
  const page = parsePendingPage(
    await redis.call("XPENDING", group.stream, group.group, "-", "+", GROUP_PAGE_LIMITS.pending),
  );
  // A ghost is a pending id without its entry: looked up inside Redis, only 1/0 comes back.
  const exists = await runEntriesExist(registerScripts(redis), {
    stream: group.stream,
    ids: page.map((entry) => entry.id),
  });
  return page.map((entry, index) => ({ ...entry, ghost: exists[index] === false }));
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
 * XPENDING of the oldest page then one read-only script for their existence, XREVRANGE pages of
 * the dead-letter stream, one XREVRANGE of the events stream. XINFO CONSUMERS has no COUNT: its
 * size is the group's consumers, which the scrape's reads already assume to be modest.
 */
export async function readGroupDetail(
  redis: RedisClient,
  group: ResolvedGroup,
  eventsStream: string,
): Promise<GroupDetail> {
  const [consumers, pending, deadLetters, events] = await Promise.all([
    section(async () =>
      parseConsumers(await redis.call("XINFO", "CONSUMERS", group.stream, group.group)),
    ),
    section(() => readPending(redis, group)),
    section(() =>
      scanDeadLetters(
        redis,
        group,
        GROUP_PAGE_LIMITS.deadLetters,
        GROUP_PAGE_LIMITS.deadLettersScanned,
      ),
    ),
    section(() => readEvents(redis, eventsStream, group)),
  ]);
  return { consumers, pending, deadLetters, events };
}
