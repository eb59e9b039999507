/**
 * Parsers for the RESP2 reply shapes of the stream commands the metrics read. ioredis types
 * these replies as `unknown`; each parser checks the shape it relies on and throws otherwise, so
 * a surprising reply becomes a per-group read error instead of a wrong number.
 */

/** The millisecond part of a stream id: stream ids are `ms-seq` timestamps. */
export function idMs(id: string): number {
  const dash = id.indexOf("-");
  const ms = Number(dash === -1 ? id : id.slice(0, dash));
  if (!Number.isFinite(ms)) throw new Error(`not a stream id: ${id}`);
  return ms;
}

function idParts(id: string): [bigint, bigint] {
  const [ms = "0", seq = "0"] = id.split("-");
  return [BigInt(ms), BigInt(seq)];
}

/** Orders stream ids numerically (string order is wrong: "10-0" < "9-0"). */
export function compareIds(a: string, b: string): number {
  const [aMs, aSeq] = idParts(a);
  const [bMs, bSeq] = idParts(b);
  if (aMs !== bMs) return aMs < bMs ? -1 : 1;
  if (aSeq !== bSeq) return aSeq < bSeq ? -1 : 1;
  return 0;
}

function asArray(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`unexpected ${what} reply`);
  return value;
}

function asNumber(value: unknown, what: string): number {
  const number = typeof value === "number" ? value : Number(value);
  if (typeof value !== "number" && typeof value !== "string") {
    throw new Error(`unexpected ${what} value`);
  }
  if (!Number.isFinite(number)) throw new Error(`unexpected ${what} value: ${String(value)}`);
  return number;
}

/** `TIME` → Unix milliseconds on the Redis clock. */
export function parseRedisTime(reply: unknown): number {
  const [seconds, micros] = asArray(reply, "TIME");
  return asNumber(seconds, "TIME") * 1000 + Math.floor(asNumber(micros, "TIME") / 1000);
}

export interface GroupInfo {
  pending: number;
  lastDeliveredId: string;
  /** null when Redis reports it as null, or when the server (< 7.0) has no such field. */
  lag: number | null;
}

/** `XINFO GROUPS stream` → the named group's fields, or undefined when there is no such group. */
export function parseGroupInfo(reply: unknown, group: string): GroupInfo | undefined {
  for (const entry of asArray(reply, "XINFO GROUPS")) {
    const flat = asArray(entry, "XINFO GROUPS");
    const fields = new Map<string, unknown>();
    for (let i = 0; i + 1 < flat.length; i += 2) fields.set(String(flat[i]), flat[i + 1]);
    if (String(fields.get("name")) !== group) continue;
    const lag = fields.get("lag");
    return {
      pending: asNumber(fields.get("pending"), "pending"),
      lastDeliveredId: String(fields.get("last-delivered-id")),
      lag: lag === null || lag === undefined ? null : asNumber(lag, "lag"),
    };
  }
  return undefined;
}

export interface PendingSummary {
  count: number;
  /** Smallest pending id; undefined when the PEL is empty. */
  minId: string | undefined;
  /** Pending entries per consumer; consumers with nothing pending are not listed. */
  consumers: [string, number][];
}

/** `XPENDING stream group` (the summary form). */
export function parsePendingSummary(reply: unknown): PendingSummary {
  const [count, minId, , consumers] = asArray(reply, "XPENDING");
  return {
    count: asNumber(count, "XPENDING count"),
    minId: typeof minId === "string" ? minId : undefined,
    consumers: (consumers === null ? [] : asArray(consumers, "XPENDING consumers")).map((pair) => {
      const [name, pending] = asArray(pair, "XPENDING consumer");
      return [String(name), asNumber(pending, "XPENDING consumer count")];
    }),
  };
}

export interface PendingEntry {
  id: string;
  idleMs: number;
  deliveries: number;
}

/** `XPENDING stream group start end count` (the extended form). */
export function parsePendingPage(reply: unknown): PendingEntry[] {
  return asArray(reply, "XPENDING").map((row) => {
    const [id, , idle, deliveries] = asArray(row, "XPENDING entry");
    return {
      id: String(id),
      idleMs: asNumber(idle, "XPENDING idle"),
      deliveries: asNumber(deliveries, "XPENDING deliveries"),
    };
  });
}

/** `XRANGE ... COUNT 1` → the id of the entry, or undefined when the range is empty. */
export function parseFirstId(reply: unknown): string | undefined {
  const [entry] = asArray(reply, "XRANGE");
  if (entry === undefined) return undefined;
  const [id] = asArray(entry, "XRANGE entry");
  return String(id);
}

/** What a failed read says about the group: only these mean "not there", anything else is an error. */
export type ReadProblem = "no-stream" | "no-group" | "wrong-type" | "error";

export function classifyReadError(error: Error): ReadProblem {
  if (error.message.startsWith("WRONGTYPE")) return "wrong-type";
  if (error.message.startsWith("NOGROUP")) return "no-group";
  if (/no such key/iu.test(error.message)) return "no-stream";
  return "error";
}

/** Errors Redis answered with (the server is up) as opposed to connection failures or timeouts. */
export function isReplyError(error: Error): boolean {
  return error.name === "ReplyError";
}
