import { codeOfMessage, redisErrorOf } from "./redisErrors.js";

/**
 * The one place Redis replies are parsed: RESP2 shapes of the stream commands (ioredis types
 * them `unknown`) and the classes of the errors Redis answers with. Each parser checks the shape
 * it relies on and throws otherwise, so a surprising reply becomes a per-group read error instead
 * of a wrong number.
 */

/** The millisecond part of a stream id: stream ids are `ms-seq` timestamps. */
export function idMs(id: string): number {
  const dash = id.indexOf("-");
  const ms = Number(dash === -1 ? id : id.slice(0, dash));
  if (!Number.isFinite(ms)) throw new Error(`not a stream id: ${id}`);
  return ms;
}

export function asArray(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`unexpected ${what} reply`);
  return value;
}

function asNumber(value: unknown, what: string): number {
  if (typeof value === "number") return value;
  if (typeof value !== "string") throw new Error(`unexpected ${what} value`);
  const number = Number(value);
  if (!Number.isFinite(number)) throw new Error(`unexpected ${what} value: ${value}`);
  return number;
}

/**
 * A flat `[key, value, key, value...]` reply (XINFO and friends) as a map. The first occurrence
 * of a key wins, as a client reading RESP3 maps would see it.
 */
export function kvList(reply: unknown, what = "key/value"): Map<string, unknown> {
  const flat = asArray(reply, what);
  const fields = new Map<string, unknown>();
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const key = String(flat[i]);
    if (!fields.has(key)) fields.set(key, flat[i + 1]);
  }
  return fields;
}

/** `TIME` → Unix milliseconds on the Redis clock. */
export function parseRedisTime(reply: unknown): number {
  const [seconds, micros] = asArray(reply, "TIME");
  return asNumber(seconds, "TIME") * 1000 + Math.floor(asNumber(micros, "TIME") / 1000);
}

export interface GroupInfo {
  name: string;
  consumers: number;
  pending: number;
  lastDeliveredId: string;
  /** 7.0+; null when Redis reports it as null or has no such field. */
  entriesRead: number | null;
  /** 7.0+; null when Redis reports it as null or has no such field. Never turned into 0. */
  lag: number | null;
}

function nullableNumber(value: unknown, what: string): number | null {
  return value === null || value === undefined ? null : asNumber(value, what);
}

/** `XINFO GROUPS stream` → every group, in Redis' order. */
export function parseXinfoGroups(reply: unknown): GroupInfo[] {
  return asArray(reply, "XINFO GROUPS").map((entry) => {
    const fields = kvList(entry, "XINFO GROUPS");
    return {
      name: String(fields.get("name")),
      consumers: asNumber(fields.get("consumers") ?? 0, "consumers"),
      pending: asNumber(fields.get("pending"), "pending"),
      lastDeliveredId: String(fields.get("last-delivered-id")),
      entriesRead: nullableNumber(fields.get("entries-read"), "entries-read"),
      lag: nullableNumber(fields.get("lag"), "lag"),
    };
  });
}

/** The group names of an `XINFO GROUPS stream` reply, in Redis' order. */
export function parseXinfoGroupNames(reply: unknown): string[] {
  return parseXinfoGroups(reply).map((info) => info.name);
}

/** The named group of an `XINFO GROUPS` reply, or undefined when there is no such group. */
export function findGroup(reply: unknown, group: string): GroupInfo | undefined {
  return parseXinfoGroups(reply).find((info) => info.name === group);
}

export interface PendingSummary {
  count: number;
  /** Smallest and largest pending id; undefined when the PEL is empty. */
  minId: string | undefined;
  maxId: string | undefined;
  /** Pending entries per consumer; consumers with nothing pending are not listed. */
  consumers: [string, number][];
}

/** `XPENDING stream group` (the summary form). */
export function parsePendingSummary(reply: unknown): PendingSummary {
  const [count, minId, maxId, consumers] = asArray(reply, "XPENDING");
  return {
    count: asNumber(count, "XPENDING count"),
    minId: typeof minId === "string" ? minId : undefined,
    maxId: typeof maxId === "string" ? maxId : undefined,
    consumers: (consumers === null ? [] : asArray(consumers, "XPENDING consumers")).map((pair) => {
      const [name, pending] = asArray(pair, "XPENDING consumer");
      return [String(name), asNumber(pending, "XPENDING consumer count")];
    }),
  };
}

export interface PendingEntry {
  id: string;
  consumer: string;
  idleMs: number;
  deliveries: number;
}

/** `XPENDING stream group start end count` (the extended form). */
export function parsePendingPage(reply: unknown): PendingEntry[] {
  return asArray(reply, "XPENDING").map((row) => {
    const [id, consumer, idle, deliveries] = asArray(row, "XPENDING entry");
    return {
      id: String(id),
      consumer: String(consumer),
      idleMs: asNumber(idle, "XPENDING idle"),
      deliveries: asNumber(deliveries, "XPENDING deliveries"),
    };
  });
}

/**
 * What a failed read says about the key or group. Only the first three mean "not there";
 * anything else is an error of its own.
 */
export type ReplyProblem = "no-stream" | "no-group" | "wrong-type" | "error";

/** Classifies the errors Redis answers with, by their code (see redisErrors.ts). */
export function classifyReplyError(error: Error): ReplyProblem {
  const code = redisErrorOf(error)?.code ?? codeOfMessage(error.message);
  switch (code) {
    case "WRONGTYPE":
      return "wrong-type";
    case "NOGROUP":
      return "no-group";
    case "NOSUCHKEY":
    case "NOSTREAM":
      return "no-stream";
    default:
      return "error";
  }
}

/** Errors Redis answered with (the server is up) as opposed to connection failures or timeouts. */
export function isReplyError(error: unknown): boolean {
  return redisErrorOf(error) !== undefined;
}
