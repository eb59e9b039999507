import type { Cluster, Redis } from "ioredis";

export interface StuckOptions {
  consumer?: string;
  /** How long ago the entries were last delivered. */
  idleMs?: number;
  /** Delivery count to record in the PEL. */
  deliveries?: number;
}

/**
 * Adds entries to a stream and makes them pending for `consumer` with the given idle time and
 * delivery count, without waiting: XREADGROUP delivers them, XCLAIM ... IDLE backdates them and
 * RETRYCOUNT sets the count. Pipelined, so 100,000 take a second.
 * Nobody else may read the group while this runs.
 */
export async function addStuckEntries(
  redis: Redis | Cluster,
  stream: string,
  group: string,
  bodies: readonly (readonly (string | Buffer)[])[],
  options: StuckOptions = {},
): Promise<string[]> {
  const { consumer = "crashed-consumer", idleMs = 3_600_000, deliveries = 1 } = options;
  await redis.xgroup("CREATE", stream, group, "$", "MKSTREAM").catch((error: unknown) => {
    if (!(error instanceof Error) || !error.message.startsWith("BUSYGROUP")) throw error;
  });
  const ids: string[] = [];
  const chunk = 1000;
  for (let start = 0; start < bodies.length; start += chunk) {
    const pipeline = redis.pipeline();
    for (const body of bodies.slice(start, start + chunk)) pipeline.xadd(stream, "*", ...body);
    const replies = (await pipeline.exec()) ?? [];
    const chunkIds = replies.map(([error, id]) => {
      if (error) throw error;
      return String(id);
    });
    ids.push(...chunkIds);
    // A real delivery (so last-delivered-id and entries-read move as they would), then the
    // PEL state the test wants.
    await redis.call(
      "XREADGROUP",
      "GROUP",
      group,
      consumer,
      "COUNT",
      chunkIds.length,
      "STREAMS",
      stream,
      ">",
    );
    await redis.call(
      "XCLAIM",
      stream,
      group,
      consumer,
      0,
      ...chunkIds,
      "IDLE",
      idleMs,
      "RETRYCOUNT",
      deliveries,
      "JUSTID",
    );
  }
  return ids;
}

export function numberedBodies(count: number, extra: readonly string[] = []): string[][] {
  return Array.from({ length: count }, (_, i) => ["n", String(i), ...extra]);
}

export interface PendingEntry {
  id: string;
  consumer: string;
  idleMs: number;
  deliveries: number;
}

export async function pendingEntries(
  redis: Redis | Cluster,
  stream: string,
  group: string,
  count = 100_000,
): Promise<PendingEntry[]> {
  const reply = (await redis.call("XPENDING", stream, group, "-", "+", count)) as [
    string,
    string,
    number,
    number,
  ][];
  return reply.map(([id, consumer, idleMs, deliveries]) => ({ id, consumer, idleMs, deliveries }));
}

/** Fields of a stream entry as raw bytes, in order. */
export async function entryFields(
  redis: Redis | Cluster,
  stream: string,
  id: string,
): Promise<Buffer[]> {
  const raw = (await redis.xrangeBuffer(stream, id, id)) as [Buffer, Buffer[]][];
  return raw[0]?.[1] ?? [];
}

/** Every entry of a stream as { id, fields } with string fields (for metadata checks). */
export async function streamEntries(
  redis: Redis | Cluster,
  stream: string,
): Promise<{ id: string; fields: Map<string, string>; raw: string[] }[]> {
  const entries = await redis.xrange(stream, "-", "+");
  return entries.map(([id, flat]) => {
    const fields = new Map<string, string>();
    for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i] ?? "", flat[i + 1] ?? "");
    return { id, fields, raw: flat };
  });
}

/**
 * A healthy consumer of the group `workers`: it reads one fresh entry and acknowledges it, so that
 * Redis sees it alive on every version (on 7.0 a read that finds nothing does not count).
 */
export async function consumeOneFresh(
  redis: Redis,
  stream: string,
  consumer: string,
): Promise<void> {
  await redis.xadd(stream, "*", "fresh", consumer);
  const reply = (await redis.call(
    "XREADGROUP",
    "GROUP",
    "workers",
    consumer,
    "COUNT",
    1,
    "STREAMS",
    stream,
    ">",
  )) as [string, [string, string[]][]][];
  await redis.xack(stream, "workers", reply[0]?.[1][0]?.[0] ?? "");
}
