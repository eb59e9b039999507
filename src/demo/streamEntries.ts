import type { Redis } from "ioredis";

/** One stream entry as the demo's actors see it; `fields` is undefined when the body is gone. */
export interface StreamEntry {
  /** The stream it was read from: the source, or a group's retry lane. */
  readonly stream: string;
  readonly id: string;
  readonly fields: ReadonlyMap<string, string> | undefined;
}

/**
 * ioredis types stream replies loosely, so the actors parse the RESP2 shape themselves:
 * XREAD/XREADGROUP answer `[[stream, [[id, [field, value, ...] | null], ...]], ...]` or null.
 */
export function parseReadReply(reply: unknown): StreamEntry[] {
  if (!Array.isArray(reply)) return [];
  const entries: StreamEntry[] = [];
  for (const stream of reply as unknown[]) {
    if (!Array.isArray(stream)) continue;
    const [name, items] = stream as [unknown, unknown];
    if (!Array.isArray(items)) continue;
    for (const item of items as unknown[]) {
      if (!Array.isArray(item)) continue;
      const [id, flat] = item as [unknown, unknown];
      entries.push({
        stream: String(name),
        id: String(id),
        fields: Array.isArray(flat) ? toMap(flat) : undefined,
      });
    }
  }
  return entries;
}

function toMap(flat: readonly unknown[]): Map<string, string> {
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(String(flat[i]), String(flat[i + 1]));
  return fields;
}

export interface ReadGroupOptions {
  stream: string;
  group: string;
  consumer: string;
  count: number;
  /** Omit for a non-blocking read. */
  blockMs?: number;
  /** `>` for new entries, `0` to re-read the consumer's own pending entries. */
  from: ">" | "0";
  /** The group's retry lane, read in the same XREADGROUP (from the same id). */
  lane?: string;
}

export async function readGroup(redis: Redis, options: ReadGroupOptions): Promise<StreamEntry[]> {
  const block = options.blockMs === undefined ? [] : ["BLOCK", options.blockMs];
  const reply = await redis.call(
    "XREADGROUP",
    "GROUP",
    options.group,
    options.consumer,
    "COUNT",
    options.count,
    ...block,
    "STREAMS",
    ...(options.lane === undefined
      ? [options.stream, options.from]
      : [options.stream, options.lane, options.from, options.from]),
  );
  return parseReadReply(reply);
}

/** How the transcript names an order: by the number the producer gave it. */
export function orderName(entry: StreamEntry): string {
  const order = entry.fields?.get("order");
  return order === undefined ? `entry ${entry.id}` : `order #${order}`;
}

/** Orders carry their amount as text; a poison order's does not parse. */
export function amountProblem(entry: StreamEntry): string | undefined {
  const amount = entry.fields?.get("amount") ?? "";
  return /^\d+(\.\d+)?$/u.test(amount) ? undefined : `amount "${amount}" is not a number`;
}
