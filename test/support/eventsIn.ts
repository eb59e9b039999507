import type { Redis } from "ioredis";

/** The advisory events in `key` so far, oldest first, each as its field record. */
export async function eventsIn(redis: Redis, key: string): Promise<Record<string, string>[]> {
  const entries = await redis.xrange(key, "-", "+");
  return entries.map(([, fields]) =>
    Object.fromEntries(
      fields.flatMap((value, i) => (i % 2 === 0 ? [[value, fields[i + 1] ?? ""]] : [])),
    ),
  );
}
