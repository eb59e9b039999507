import { open } from "node:fs/promises";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { MAX_ID_PART } from "../core/streamIds.js";
import { redisNowMs } from "../redis/redisNowMs.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { isGroupsDeadLetter, parseDeadLetter } from "../reads/listDeadLetters.js";
import { DEAD_LETTER_PAGE_SIZE } from "./deadLetterScan.js";

export interface SaveSelection {
  reason?: string | undefined;
  ids?: readonly string[] | undefined;
  olderThanMs?: number | undefined;
}

/** Text where the bytes are UTF-8, else base64: the file gives back exactly the bytes read. */
function encode(bytes: Buffer): { utf8: string } | { base64: string } {
  const text = bytes.toString("utf8");
  return Buffer.from(text, "utf8").equals(bytes)
    ? { utf8: text }
    : { base64: bytes.toString("base64") };
}

/**
 * Writes the group's dead letters a purge with this selection would consider to `path`, one
 * JSON line each (`id`, `fields` as [name, value] pairs, every field with its metadata, each
 * `{"utf8": s}` or `{"base64": s}`), oldest first; resolves to how many. Read page by page with
 * XRANGE, never decoded on the way: the file holds the bytes Redis holds. Dead letters a reader
 * of the dead-letter stream still needs are saved too, although the purge keeps them.
 */
export async function saveDeadLetters(
  redis: RedisClient,
  group: ResolvedGroup,
  selection: SaveSelection,
  path: string,
): Promise<number> {
  const wanted = selection.ids === undefined ? undefined : new Set(selection.ids);
  const cutoffMs =
    selection.olderThanMs === undefined
      ? undefined
      : Math.max(0, (await redisNowMs(redis)) - selection.olderThanMs);
  const end = cutoffMs === undefined ? "+" : `${cutoffMs}-${MAX_ID_PART}`;
  const file = await open(path, "w");
  let saved = 0;
  try {
    for (let start = "-"; ;) {
      const page = (await redis.xrangeBuffer(
        group.deadLetterStream,
        start,
        end,
        "COUNT",
        DEAD_LETTER_PAGE_SIZE,
      )) as [Buffer, Buffer[]][];
      const lines: string[] = [];
      for (const [rawId, flat] of page) {
        const letter = parseDeadLetter(rawId, flat);
        if (!isGroupsDeadLetter(letter, group, selection.reason)) continue;
        if (wanted !== undefined && !wanted.has(letter.id)) continue;
        const fields: unknown[] = [];
        for (let i = 0; i + 1 < flat.length; i += 2) {
          fields.push([encode(flat[i] ?? Buffer.alloc(0)), encode(flat[i + 1] ?? Buffer.alloc(0))]);
        }
        lines.push(JSON.stringify({ id: letter.id, fields }));
      }
      if (lines.length > 0) await file.write(`${lines.join("\n")}\n`);
      saved += lines.length;
      const last = page.at(-1);
      if (last === undefined || page.length < DEAD_LETTER_PAGE_SIZE) return saved;
      start = `(${last[0].toString()}`;
    }
  } finally {
    await file.close();
  }
}
