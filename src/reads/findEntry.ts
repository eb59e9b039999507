import { deadLetterIndexKeys } from "../core/deadLetterIndex.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { entryBytes, type ByteBudget } from "./ByteBudget.js";
import { isGroupsDeadLetter, parseDeadLetter, type RawDeadLetter } from "./listDeadLetters.js";

/** Index entries (envelopes, no body) looked at for an original id, newest first. */
export const FIND_SCANNED = 1000;

interface PendingHit {
  /** The source stream, or the group's retry lane. */
  stream: string;
  consumer: string;
  idleMs: number;
  deliveries: number;
}

export interface FoundEntry {
  /** Pending for the group in the source stream or its retry lane. */
  pending: PendingHit[];
  /** The group's dead letters with this id, or with this x-original-id (envelopes only). */
  deadLetters: RawDeadLetter[];
  /** False when the group's dead-letter index is not complete: original ids were not searched. */
  indexed: boolean;
}

type Entry = [Buffer, Buffer[]];

async function pendingIn(
  redis: RedisClient,
  stream: string,
  group: string,
  id: string,
): Promise<PendingHit[]> {
  const reply = (await redis.call("XPENDING", stream, group, id, id, 1)) as [
    string,
    string,
    number,
    number,
  ][];
  return reply.map(([, consumer, idleMs, deliveries]) => ({
    stream,
    consumer,
    idleMs,
    deliveries,
  }));
}

/**
 * Where an id is, for the group (README "Web console", find): pending in the source stream or
 * its retry lane (XPENDING id id: no entry read), a dead letter of the group at that id or with
 * that x-original-id. From a complete dead-letter index: envelopes only (XRANGE id id, then the
 * newest FIND_SCANNED envelopes for an original id); else the dead-letter stream's entry at that
 * id, read whole only while the byte budget lasts.
 */
export async function findEntry(
  redis: RedisClient,
  group: ResolvedGroup,
  id: string,
  budget: ByteBudget,
): Promise<FoundEntry> {
  const keys = deadLetterIndexKeys(group);
  const lane = group.retryLaneStream;
  const [inStream, inLane, complete] = await Promise.all([
    pendingIn(redis, group.stream, group.group, id),
    lane === undefined ? [] : pendingIn(redis, lane, group.group, id).catch(() => []),
    redis.hget(keys.state, "complete"),
  ]);
  const found: FoundEntry = { pending: [...inStream, ...inLane], deadLetters: [], indexed: false };
  const mine = (entries: Entry[]): RawDeadLetter[] =>
    entries
      .map(([rawId, flat]) => parseDeadLetter(rawId, flat))
      .filter((letter) => isGroupsDeadLetter(letter, group));
  if (complete === "1") {
    found.indexed = true;
    const [byId, newest] = (await Promise.all([
      redis.xrangeBuffer(keys.index, id, id),
      redis.xrevrangeBuffer(keys.index, "+", "-", "COUNT", FIND_SCANNED),
    ])) as [Entry[], Entry[]];
    const byOriginal = mine(newest).filter((l) => l.metadata["x-original-id"] === id);
    found.deadLetters = [...mine(byId), ...byOriginal.filter((l) => l.id !== id)];
    return found;
  }
  if (!budget.left) return found;
  const entries = (await redis.xrangeBuffer(group.deadLetterStream, id, id)) as Entry[];
  for (const [rawId, flat] of entries) budget.spend(entryBytes(rawId, flat));
  found.deadLetters = mine(entries).map((letter) => ({ ...letter, fields: [] }));
  return found;
}
