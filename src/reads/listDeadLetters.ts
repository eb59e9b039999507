import type { RedisClient } from "../redis/RedisClient.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { METADATA_FIELDS } from "../core/copyMetadata.js";

export interface DeadLetter {
  id: string;
  /** Metadata fields by name. */
  metadata: Record<string, string>;
  /**
   * The original fields in order, as [name, value] pairs: UTF-8 text when the bytes are valid
   * UTF-8, else `base64:` followed by the bytes in base64 (a listing never alters what it shows).
   */
  fields: [string, string][];
}

/** Scanned per XREVRANGE call while looking for the group's dead letters among others'. */
const SCAN_PAGE = 1000;

function show(bytes: Buffer): string {
  const text = bytes.toString("utf8");
  return Buffer.from(text, "utf8").equals(bytes) ? text : `base64:${bytes.toString("base64")}`;
}

/** A dead letter as read: metadata as text, the original fields as the bytes they are. */
export interface RawDeadLetter {
  id: string;
  metadata: Record<string, string>;
  fields: [Buffer, Buffer][];
}

/** A dead letter's entry as read: x-* fields as text, the others kept as bytes, in order. */
export function parseDeadLetter(rawId: Buffer, flat: readonly Buffer[]): RawDeadLetter {
  const metadata: Record<string, string> = {};
  const fields: [Buffer, Buffer][] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const rawName = flat[i] ?? Buffer.alloc(0);
    const value = flat[i + 1] ?? Buffer.alloc(0);
    const name = show(rawName);
    if (METADATA_FIELDS.includes(name)) metadata[name] = value.toString("utf8");
    else fields.push([rawName, value]);
  }
  return { id: rawId.toString(), metadata, fields };
}

/** Whether a dead letter is the group's (the dead-letter stream may be shared), of `reason`. */
export function isGroupsDeadLetter(
  letter: RawDeadLetter,
  group: Pick<ResolvedGroup, "stream" | "group">,
  reason?: string,
): boolean {
  const { metadata } = letter;
  return (
    metadata["x-original-stream"] === group.stream &&
    metadata["x-original-group"] === group.group &&
    (reason === undefined || metadata["x-dead-letter-reason"] === reason)
  );
}

export interface DeadLetterScan {
  /** Newest first. */
  letters: RawDeadLetter[];
  /** Entries of the dead-letter stream looked at (the group's and others'). */
  scanned: number;
  /** True when the scan stopped at maxScanned before finding `limit` or reaching the start. */
  cutShort: boolean;
}

/**
 * The group's newest `limit` dead letters, newest first, read-only, looking at no more than
 * `maxScanned` entries of the dead-letter stream (which may hold other groups' dead letters too:
 * by default every group of a stream shares one; they are skipped, by x-original-stream and
 * x-original-group). Field values stay Buffers: nothing is decoded here.
 */
async function scanDeadLetters(
  redis: RedisClient,
  group: ResolvedGroup,
  limit: number,
  maxScanned = Number.POSITIVE_INFINITY,
  reason?: string,
): Promise<DeadLetterScan> {
  const letters: RawDeadLetter[] = [];
  let scanned = 0;
  let end = "+";
  while (letters.length < limit) {
    const count = Math.min(SCAN_PAGE, maxScanned - scanned);
    if (count <= 0) return { letters, scanned, cutShort: true };
    const page = (await redis.xrevrangeBuffer(
      group.deadLetterStream,
      end,
      "-",
      "COUNT",
      count,
    )) as [Buffer, Buffer[]][];
    scanned += page.length;
    for (const [rawId, flat] of page) {
      const letter = parseDeadLetter(rawId, flat);
      if (isGroupsDeadLetter(letter, group, reason)) {
        letters.push(letter);
        if (letters.length >= limit) break;
      }
    }
    if (page.length < count) break;
    end = `(${page.at(-1)?.[0].toString() ?? "0-0"}`;
  }
  return { letters, scanned, cutShort: false };
}

/**
 * The group's newest `limit` dead letters, oldest first (newest last), read-only, for `dlq list`:
 * the original fields shown as text (see DeadLetter.fields); only those of `reason` when given.
 */
export async function listDeadLetters(
  redis: RedisClient,
  group: ResolvedGroup,
  limit: number,
  reason?: string,
): Promise<DeadLetter[]> {
  const { letters } = await scanDeadLetters(redis, group, limit, Number.POSITIVE_INFINITY, reason);
  return letters
    .map(({ id, metadata, fields }) => ({
      id,
      metadata,
      fields: fields.map(([name, value]): [string, string] => [show(name), show(value)]),
    }))
    .reverse();
}
