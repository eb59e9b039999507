import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { HeldBackTally } from "./HeldBackTally.js";

export type DeadLetterReason = "max-deliveries" | "action";
export const DEAD_LETTER_REASONS: readonly DeadLetterReason[] = ["max-deliveries", "action"];

/** Dead letters examined per script call: about a millisecond of Redis time for small entries. */
export const DEAD_LETTER_PAGE_SIZE = 500;

/** Each id once, in the order given: a dead letter named twice is still moved or deleted once. */
export function distinctIds(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}

/** Splits `--id` lists into script calls of at most `size` ids. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}

/** The last id of the dead-letter stream now, or undefined when it is empty or missing. */
export async function lastDeadLetterId(
  redis: ScriptedRedis,
  group: ResolvedGroup,
): Promise<string | undefined> {
  const reply = (await redis.call("XREVRANGE", group.deadLetterStream, "+", "-", "COUNT", "1")) as [
    string,
    unknown,
  ][];
  return reply[0]?.[0];
}

export interface DeadLetterCount {
  /** Dead letters a redrive would move now. */
  movable: number;
  /** Every dead letter of the group (and reason), movable or not. */
  total: number;
  /** The groups of the dead-letter stream that hold some of them back. */
  heldBack: HeldBackTally;
}

/**
 * How many dead letters of the group (and reason) lie in the dead-letter stream up to `endId`,
 * counted inside Redis by the redrive script in dry-run mode: bodies never cross the network.
 */
export async function countDeadLetters(
  redis: ScriptedRedis,
  group: ResolvedGroup,
  reason: DeadLetterReason | undefined,
  endId = "+",
): Promise<DeadLetterCount> {
  let cursor = "0-0";
  const count: DeadLetterCount = { movable: 0, total: 0, heldBack: new HeldBackTally() };
  for (;;) {
    const page = parseRedrivePage(
      await redis.sjRedriveDeadLetters(
        2,
        group.deadLetterStream,
        group.requeueStream,
        group.stream,
        group.group,
        cursor,
        endId,
        DEAD_LETTER_PAGE_SIZE,
        DEAD_LETTER_PAGE_SIZE,
        reason ?? "",
        "1",
        "",
      ),
    );
    count.movable += page.moved;
    count.total += page.moved + page.held + page.oversizedIds.length;
    count.heldBack.add(page.heldBackBy);
    cursor = page.nextCursor;
    if (page.done) return count;
  }
}

export interface RedrivePage {
  nextCursor: string;
  examined: number;
  moved: number;
  done: boolean;
  oversizedIds: string[];
  /** Flat `group, entries, ...` (see HeldBackTally). */
  heldBackBy: unknown[];
  /** Selected dead letters held back by a group of the dead-letter stream. */
  held: number;
  /** Ids given to the script that are not dead letters of the group. */
  unknownIds: string[];
}

export function parseRedrivePage(reply: unknown): RedrivePage {
  if (!Array.isArray(reply) || reply.length < 5) {
    throw new Error(`unexpected redriveDeadLetters reply: ${JSON.stringify(reply)}`);
  }
  return {
    nextCursor: String(reply[0]),
    examined: Number(reply[1]),
    moved: Number(reply[2]),
    done: Number(reply[3]) === 1,
    oversizedIds: Array.isArray(reply[4]) ? reply[4].map(String) : [],
    heldBackBy: Array.isArray(reply[5]) ? reply[5] : [],
    held: Number(reply[6] ?? 0),
    unknownIds: Array.isArray(reply[7]) ? reply[7].map(String) : [],
  };
}
