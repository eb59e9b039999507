import type { Redis } from "ioredis";
import { DEAD_LETTER_STREAMS, historyKey, SOURCE_STREAMS, type HistoryKind } from "./groups.js";

/** What the checker reads: the history the run wrote into Redis, and the streams themselves. */
export interface History {
  /** key -> "stream id" of the entry as produced. */
  produced: Record<string, string>;
  /** "key group stream id consumer ms" per acknowledgement that took effect. */
  acks: string[];
  /** "key group stream id ms how consumer" per entry delivered to a consumer (jsPrelude.ts). */
  deliveries: string[];
  /** "key group ms why" per entry a consumer held when it crashed, or stalled past minIdleMs. */
  stalls: string[];
  /** "key group dead-letter-id ms" per dead letter the operator purged, or redrove. */
  purged: string[];
  redriven: string[];
  deadLetters: DeadLetter[];
  /** Bodies (fields without x-*) of the produced entries, hex per field, by key. */
  sourceBodies: Record<string, string>;
}

export interface DeadLetter {
  stream: string;
  id: string;
  key: string;
  /** x-original-group: the group that dead-lettered it. */
  group: string;
  reason: string;
  deliveries: number;
  /** x-dead-lettered-at: when the janitor wrote it (ms, Redis' clock, the host's). */
  at: number;
  body: string;
}

/** Fields as name/value buffer pairs -> [key, body of the non-x-* fields, x-* fields]. */
function splitFields(fields: Buffer[]): { key: string; body: string; meta: Map<string, string> } {
  let key = "";
  const body: string[] = [];
  const meta = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = String(fields[i]);
    const value = fields[i + 1] ?? Buffer.alloc(0);
    if (name === "k") key = value.toString();
    if (name.startsWith("x-")) meta.set(name, value.toString());
    else body.push(`${name}=${value.toString("hex")}`);
  }
  return { key, body: body.join(","), meta };
}

async function entries(redis: Redis, stream: string): Promise<[string, Buffer[]][]> {
  const reply = (await redis.xrangeBuffer(stream, "-", "+")) as [Buffer, Buffer[]][];
  return reply.map(([id, fields]) => [id.toString(), fields]);
}

/** One kind of list history, every source stream's (each in its own slot), one after the other. */
async function lists(redis: Redis, kind: HistoryKind): Promise<string[]> {
  const all: string[] = [];
  for (const stream of SOURCE_STREAMS)
    all.push(...(await redis.lrange(historyKey(stream, kind), 0, -1)));
  return all;
}

export async function readHistory(redis: Redis): Promise<History> {
  const produced: Record<string, string> = {};
  for (const stream of SOURCE_STREAMS) {
    Object.assign(produced, await redis.hgetall(historyKey(stream, "produced")));
  }
  const history: History = {
    produced,
    acks: await lists(redis, "acks"),
    deliveries: await lists(redis, "deliveries"),
    stalls: await lists(redis, "stalls"),
    purged: await lists(redis, "purged"),
    redriven: await lists(redis, "redriven"),
    deadLetters: [],
    sourceBodies: {},
  };
  for (const stream of SOURCE_STREAMS) {
    for (const [, fields] of await entries(redis, stream)) {
      const { key, body } = splitFields(fields);
      history.sourceBodies[key] = body;
    }
  }
  for (const stream of DEAD_LETTER_STREAMS) {
    for (const [id, fields] of await entries(redis, stream)) {
      const { key, body, meta } = splitFields(fields);
      history.deadLetters.push({
        stream,
        id,
        key,
        group: meta.get("x-original-group") ?? "",
        reason: meta.get("x-dead-letter-reason") ?? "",
        deliveries: Number(meta.get("x-delivery-count") ?? "NaN"),
        at: Number(meta.get("x-dead-lettered-at") ?? "NaN"),
        body,
      });
    }
  }
  return history;
}
