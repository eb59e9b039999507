import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { parsePendingPage, type PendingEntry } from "../redis/replies.js";
import { entryBytes, type ByteBudget } from "./ByteBudget.js";

export interface PendingRow extends PendingEntry {
  /** True when the entry is gone from the stream (a ghost); undefined: not checked (budget). */
  ghost: boolean | undefined;
}

/**
 * The oldest `count` pending entries (XPENDING - + COUNT), each looked up with XRANGE id id,
 * oldest first: a ghost's lookup finds nothing and costs nothing, so ids below the stream's
 * first entry (trimmed away) are all found. The first entry found alive is read whole; later
 * ones only while the byte budget lasts (Redis cannot tell an entry's existence without copying
 * it), the rest are not checked.
 */
export async function readPendingPage(
  redis: RedisClient,
  group: ResolvedGroup,
  limits: { count: number; budget: ByteBudget },
): Promise<PendingRow[]> {
  const { budget } = limits;
  const page = parsePendingPage(
    await redis.call("XPENDING", group.stream, group.group, "-", "+", limits.count),
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
