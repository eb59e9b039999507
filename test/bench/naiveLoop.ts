import type { Redis } from "ioredis";

export type SweepPath = "requeue" | "dead-letter";

export interface NaiveOptions {
  stream: string;
  group: string;
  deadLetterStream: string;
  minIdleMs: number;
  path: SweepPath;
  /** XAUTOCLAIM COUNT. */
  pageSize: number;
  deadLetterMaxLen: number;
}

type AutoClaimReply = [string, ([string, string[] | null] | null)[], string[]?];

/**
 * The loop a user would write by hand: XAUTOCLAIM a page with bodies, then one pipeline with an
 * XADD copy and an XACK per entry. It carries less metadata than the janitor (no delivery counts
 * or last owner: XAUTOCLAIM does not return them) and is neither atomic nor fenced. Its copies
 * have the janitor's layout (the original fields first, the metadata after them).
 */
export async function naiveSweep(redis: Redis, options: NaiveOptions): Promise<number> {
  const { stream, group, path } = options;
  let cursor = "0-0";
  let moved = 0;
  do {
    const [next, entries] = (await redis.call(
      "XAUTOCLAIM",
      stream,
      group,
      "naive-janitor",
      options.minIdleMs,
      cursor,
      "COUNT",
      options.pageSize,
    )) as AutoClaimReply;
    const pipeline = redis.pipeline();
    for (const entry of entries) {
      if (entry === null) continue;
      const [id, fields] = entry;
      if (fields === null) continue;
      if (path === "requeue") {
        pipeline.xadd(stream, "*", ...fields, "x-original-id", id);
      } else {
        pipeline.xadd(
          options.deadLetterStream,
          "MAXLEN",
          "~",
          options.deadLetterMaxLen,
          "*",
          ...fields,
          "x-original-id",
          id,
          "x-original-stream",
          stream,
          "x-original-group",
          group,
          "x-dead-letter-reason",
          "action",
          "x-dead-lettered-at",
          String(Date.now()),
        );
      }
      pipeline.xack(stream, group, id);
      moved += 1;
    }
    if (pipeline.length > 0) {
      const replies = (await pipeline.exec()) ?? [];
      for (const [error] of replies) if (error) throw error;
    }
    cursor = next;
  } while (cursor !== "0-0");
  return moved;
}
