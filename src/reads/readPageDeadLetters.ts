import { deadLetterIndexKeys } from "../core/deadLetterIndex.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import {
  isGroupsDeadLetter,
  parseDeadLetter,
  type DeadLetterScan,
  type RawDeadLetter,
} from "./listDeadLetters.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { entryBytes, type ByteBudget } from "./ByteBudget.js";

/** The group page's dead letters and what it left out of them. */
export interface PageDeadLetters extends DeadLetterScan {
  /** Read from the group's complete index (envelopes, no body); false: its index is not complete. */
  indexed: boolean;
  /** The group's dead letters in all (its index's length), when indexed. */
  total: number | undefined;
  /** Ids of dead letters shown whose body was not read: the byte budget was spent (showBodies). */
  bodiesLeftOut: string[];
  /** Not indexed: the scan of the dead-letter stream stopped because the byte budget was spent. */
  budgetSpent: boolean;
}

export interface PageDeadLetterOptions {
  limit: number;
  /** Entries of the dead-letter stream looked at when the index is not complete. */
  maxScanned: number;
  budget: ByteBudget;
  showBodies: boolean;
  /** The page's cursor: only dead letters older than this id (the last one the page before showed). */
  before?: string;
}

/** Most entries one XREVRANGE of the unindexed scan asks for (fewer while entries are large). */
const SCAN_PAGE = 100;

type Entry = [Buffer, Buffer[]];

/** The bodies of the shown dead letters, one XRANGE id id each, while the budget lasts. */
async function readBodies(
  redis: RedisClient,
  deadLetterStream: string,
  letters: RawDeadLetter[],
  budget: ByteBudget,
): Promise<string[]> {
  const leftOut: string[] = [];
  for (const letter of letters) {
    if (!budget.left) {
      leftOut.push(letter.id);
      continue;
    }
    const [entry] = (await redis.xrangeBuffer(deadLetterStream, letter.id, letter.id)) as Entry[];
    if (entry === undefined) continue; // purged or redriven since the index was read
    budget.spend(entryBytes(...entry));
    letter.fields = parseDeadLetter(...entry).fields;
  }
  return leftOut;
}

/**
 * A group whose index is not complete (dead letters written by an older version, index being
 * built by the sweep): its newest dead letters from the dead-letter stream itself, bodies
 * included, newest first, in reads sized to what is left of the byte budget (one entry first,
 * then as many as the entries seen so far say fit, at most SCAN_PAGE).
 */
async function scanWithinBudget(
  redis: RedisClient,
  group: ResolvedGroup,
  options: PageDeadLetterOptions,
): Promise<PageDeadLetters> {
  const { budget, limit, maxScanned } = options;
  const letters: RawDeadLetter[] = [];
  const result = (cutShort: boolean, budgetSpent: boolean): PageDeadLetters => ({
    letters,
    scanned,
    cutShort,
    indexed: false,
    total: undefined,
    bodiesLeftOut: [],
    budgetSpent,
  });
  let scanned = 0;
  let end = options.before === undefined ? "+" : `(${options.before}`;
  let count = 1;
  while (letters.length < limit) {
    if (scanned >= maxScanned) return result(true, false);
    if (!budget.left) return result(true, true);
    const asked = Math.min(count, maxScanned - scanned);
    const page = (await redis.xrevrangeBuffer(
      group.deadLetterStream,
      end,
      "-",
      "COUNT",
      asked,
    )) as Entry[];
    let bytes = 0;
    for (const [rawId, flat] of page) {
      bytes += entryBytes(rawId, flat);
      const letter = parseDeadLetter(rawId, flat);
      if (isGroupsDeadLetter(letter, group) && letters.length < limit) letters.push(letter);
    }
    budget.spend(bytes);
    scanned += page.length;
    const last = page.at(-1);
    if (page.length < asked || last === undefined) break;
    end = `(${last[0].toString()}`;
    count = Math.max(1, Math.min(SCAN_PAGE, Math.floor(budget.remaining / (bytes / page.length))));
  }
  return result(false, false);
}

/**
 * The group's newest dead letters for its page. From its dead-letter index when complete (the
 * envelopes, no body: one XREVRANGE of the index, whatever the bodies' sizes), the bodies then
 * read one by one within the byte budget when asked for; else from the dead-letter stream within
 * the budget (scanWithinBudget), saying so.
 */
export async function readPageDeadLetters(
  redis: RedisClient,
  group: ResolvedGroup,
  options: PageDeadLetterOptions,
): Promise<PageDeadLetters> {
  const keys = deadLetterIndexKeys(group);
  const [complete, total] = await Promise.all([
    redis.hget(keys.state, "complete"),
    redis.xlen(keys.index),
  ]);
  if (complete !== "1") return scanWithinBudget(redis, group, options);
  // An id as cursor, not an offset: dead letters added or removed meanwhile do not shift a page.
  const page = (await redis.xrevrangeBuffer(
    keys.index,
    options.before === undefined ? "+" : `(${options.before}`,
    "-",
    "COUNT",
    options.limit,
  )) as Entry[];
  const letters = page.map(([rawId, flat]) => parseDeadLetter(rawId, flat));
  const bodiesLeftOut = options.showBodies
    ? await readBodies(redis, group.deadLetterStream, letters, options.budget)
    : [];
  return {
    letters,
    scanned: letters.length,
    cutShort: false,
    indexed: true,
    total,
    bodiesLeftOut,
    budgetSpent: false,
  };
}
