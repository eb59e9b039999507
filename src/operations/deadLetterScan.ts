import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { HeldBackTally } from "./HeldBackTally.js";
import type { DeadLetterReason } from "../core/copyMetadata.js";
import { runRedriveDeadLetters } from "../scripts/redriveDeadLetters.js";

export type { DeadLetterReason };

/** Dead letters examined per script call: about a millisecond of Redis time for small entries. */
export const DEAD_LETTER_PAGE_SIZE = 500;

/** Each id once, in the order given: a dead letter named twice is still moved or deleted once. */
export function distinctIds(ids: readonly string[]): string[] {
  return [...new Set(ids)];
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
    const page = await runRedriveDeadLetters(redis, {
      deadLetterStream: group.deadLetterStream,
      target: group.requeueStream,
      stream: group.stream,
      group: group.group,
      reason,
      cursor,
      endId,
      scanLimit: DEAD_LETTER_PAGE_SIZE,
      limit: DEAD_LETTER_PAGE_SIZE,
      dryRun: true,
    });
    count.movable += page.moved;
    count.total += page.moved + page.held + page.oversizedIds.length;
    count.heldBack.add(page.heldBackBy);
    cursor = page.nextCursor;
    if (page.done) return count;
  }
}
