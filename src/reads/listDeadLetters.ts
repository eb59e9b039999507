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

/**
 * The group's newest `limit` dead letters, oldest first (newest last), read-only. The dead-letter
 * stream may hold other groups' dead letters too (by default every group of a stream shares one):
 * they are skipped, by x-original-stream and x-original-group.
 */
export async function listDeadLetters(
  redis: RedisClient,
  group: ResolvedGroup,
  limit: number,
): Promise<DeadLetter[]> {
  const found: DeadLetter[] = [];
  let end = "+";
  while (found.length < limit) {
    const page = (await redis.xrevrangeBuffer(
      group.deadLetterStream,
      end,
      "-",
      "COUNT",
      SCAN_PAGE,
    )) as [Buffer, Buffer[]][];
    for (const [rawId, flat] of page) {
      const metadata: Record<string, string> = {};
      const fields: [string, string][] = [];
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const name = show(flat[i] ?? Buffer.alloc(0));
        const value = flat[i + 1] ?? Buffer.alloc(0);
        if (METADATA_FIELDS.includes(name)) metadata[name] = value.toString("utf8");
        else fields.push([name, show(value)]);
      }
      if (
        metadata["x-original-stream"] === group.stream &&
        metadata["x-original-group"] === group.group
      ) {
        found.push({ id: rawId.toString(), metadata, fields });
        if (found.length >= limit) break;
      }
    }
    if (page.length < SCAN_PAGE) break;
    end = `(${page.at(-1)?.[0].toString() ?? "0-0"}`;
  }
  return found.reverse();
}
