import { constants } from "node:fs";
import { open, stat, type FileHandle } from "node:fs/promises";

/**
 * Configuration files hold every listed group (300 groups with all their keys take about 75 KiB,
 * and thousands are supported); 4 MiB is far beyond any real one and still a bounded read.
 */
export const CONFIG_FILE_MAX_BYTES = 4 * 1024 * 1024;
/** A password file holds one line: anything bigger is a mistake (a key file, `/dev/zero`). */
export const SECRET_FILE_MAX_BYTES = 64 * 1024;

function sizeText(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes / 1024} KiB`;
}

/** Why a path cannot be read as a small regular file, in words for "expected ..."; or the text. */
export type SmallFileRead = { ok: true; text: string } | { ok: false; problem: string };

function kindOf(stats: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isSocket(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
}): string {
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  return "not a regular file";
}

/**
 * At most `limit` bytes of an open file. The buffer starts at the size stat gave (plus one byte,
 * to see the end in one read) and doubles while the file goes on, up to `limit`: one of the
 * limit's size (4 MiB for a configuration file) would be zero-filled at every command's start.
 */
async function readAtMost(handle: FileHandle, size: number, limit: number): Promise<Buffer> {
  let buffer = Buffer.alloc(Math.min(size + 1, limit));
  let length = 0;
  while (length < limit) {
    if (length === buffer.length) {
      const grown = Buffer.alloc(Math.min(buffer.length * 2, limit));
      buffer.copy(grown, 0, 0, length);
      buffer = grown;
    }
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  return buffer.subarray(0, length);
}

/**
 * Reads a regular file of at most `maxBytes` without ever blocking or reading much: stat
 * first (a FIFO would block open() and read() forever, a device would stream without end), then
 * open with O_NONBLOCK and check the opened file again (it may have been swapped in between),
 * then read at most one byte more than allowed.
 */
export async function readSmallFile(path: string, maxBytes: number): Promise<SmallFileRead> {
  const code = (error: unknown): string =>
    (error as { code?: unknown }).code === undefined
      ? "unreadable"
      : String((error as { code?: unknown }).code);
  const tooBig = (bytes: number): string =>
    `a file of at most ${sizeText(maxBytes)} (found ${bytes} bytes)`;
  try {
    const before = await stat(path);
    if (!before.isFile()) return { ok: false, problem: `a regular file (found ${kindOf(before)})` };
    if (before.size > maxBytes) return { ok: false, problem: tooBig(before.size) };
    const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const opened = await handle.stat();
      if (!opened.isFile()) {
        return { ok: false, problem: `a regular file (found ${kindOf(opened)})` };
      }
      const read = await readAtMost(handle, opened.size, maxBytes + 1);
      if (read.length > maxBytes) return { ok: false, problem: tooBig(read.length) };
      return { ok: true, text: read.toString("utf8") };
    } finally {
      await handle.close();
    }
  } catch (error) {
    return { ok: false, problem: `a readable file (${code(error)})` };
  }
}
