import type { RedisClient } from "../redis/scriptedRedis.js";

/** At most this many candidates travel to the script: the best few are all it ever needs. */
const MAX_CANDIDATES = 16;

interface ConsumerInfo {
  name: string;
  /** Milliseconds since the consumer was last seen working. */
  quietMs: number;
}

function parseConsumer(flat: unknown): ConsumerInfo | undefined {
  if (!Array.isArray(flat)) return undefined;
  const fields = new Map<string, unknown>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(String(flat[i]), flat[i + 1]);
  const name = fields.get("name");
  const idle = Number(fields.get("idle"));
  // 7.2+: `idle` counts from the last attempted read, `inactive` from the last successful one
  // (-1 for never); the latter is what tells a live consumer from a stuck one.
  const inactive = fields.has("inactive") ? Number(fields.get("inactive")) : undefined;
  const quietMs =
    inactive === undefined ? idle : inactive < 0 ? Number.POSITIVE_INFINITY : inactive;
  if (typeof name !== "string" || Number.isNaN(quietMs)) return undefined;
  return { name, quietMs };
}

/**
 * Live consumers of the group, most recently active first. A consumer counts as live when it
 * was seen within minIdleMs: anything quieter than that is exactly what the sweep reclaims from.
 */
export async function findReassignCandidates(
  redis: RedisClient,
  stream: string,
  group: string,
  minIdleMs: number,
  janitorConsumer: string,
): Promise<string[]> {
  const reply = (await redis.call("XINFO", "CONSUMERS", stream, group)) as unknown[];
  return reply
    .map(parseConsumer)
    .filter(
      (c): c is ConsumerInfo =>
        c !== undefined && c.name !== janitorConsumer && c.quietMs < minIdleMs,
    )
    .sort((a, b) => a.quietMs - b.quietMs)
    .slice(0, MAX_CANDIDATES)
    .map((c) => c.name);
}
