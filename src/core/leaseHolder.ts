/**
 * Who holds the lease, as recorded at its acquisition: the holder hash that fenceLease.lua writes
 * beside the lease key (fields value, host, pid, fencingToken, acquiredAtMs). The one reader of
 * that record, for the lease itself, the web console and `inspect`.
 */
export interface LeaseHolder {
  /** UNKNOWN_HOST when the record names none. */
  readonly host: string;
  /** NaN where the record holds no whole number. */
  readonly pid: number;
  readonly fencingToken: number;
  readonly acquiredAtMs: number;
}

export const UNKNOWN_HOST = "?";

/** HGETALL's reply: ioredis turns it into an object; a pipeline may give a flat list. */
function hashFields(reply: unknown): Record<string, string> {
  if (!Array.isArray(reply)) {
    return typeof reply === "object" && reply !== null ? (reply as Record<string, string>) : {};
  }
  const record: Record<string, string> = {};
  for (let index = 0; index + 1 < reply.length; index += 2) {
    record[String(reply[index])] = String(reply[index + 1]);
  }
  return record;
}

/** Digits only: `0x2a`, ` 42` or `4.2` are not a pid someone wrote there. */
function wholeNumber(text: string | undefined): number {
  return text !== undefined && /^\d+$/u.test(text) ? Number(text) : Number.NaN;
}

/**
 * The holder, from the lease key's value and the HGETALL reply of its holder record: undefined
 * when the lease is free, "unknown" when the record is not the current value's (being written, or
 * left by an earlier holder).
 */
export function leaseHolderOf(
  leaseValue: unknown,
  holderRecord: unknown,
): LeaseHolder | "unknown" | undefined {
  if (typeof leaseValue !== "string") return undefined;
  const record = hashFields(holderRecord);
  if (record.value !== leaseValue) return "unknown";
  return {
    host: record.host ?? UNKNOWN_HOST,
    pid: wholeNumber(record.pid),
    fencingToken: wholeNumber(record.fencingToken),
    acquiredAtMs: wholeNumber(record.acquiredAtMs),
  };
}
