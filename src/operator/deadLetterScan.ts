import type { ScriptedRedis } from "../redis/scriptedRedis.js";
import type { ResolvedGroup } from "../sweep/resolveGroup.js";

export type DeadLetterReason = "max-deliveries" | "action";
export const DEAD_LETTER_REASONS: readonly DeadLetterReason[] = ["max-deliveries", "action"];

/** Dead letters examined per script call: about a millisecond of Redis time for small entries. */
export const DEAD_LETTER_PAGE_SIZE = 500;

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

/**
 * How many dead letters of the group (and reason) lie in the dead-letter stream up to `endId`,
 * counted inside Redis by the redrive script in dry-run mode: bodies never cross the network.
 */
export async function countDeadLetters(
  redis: ScriptedRedis,
  group: ResolvedGroup,
  reason: DeadLetterReason | undefined,
  endId = "+",
): Promise<number> {
  let cursor = "0-0";
  let count = 0;
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
    count += page.moved;
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
  };
}
