import { readFile } from "node:fs/promises";

/**
 * The soft limit on open file descriptors from the text of /proc/self/limits (Linux):
 * `Infinity` for "unlimited", undefined when the line is missing or unreadable.
 */
export function parseOpenFilesLimit(limits: string): number | undefined {
  const soft = /^Max open files\s+(\S+)/mu.exec(limits)?.[1];
  if (soft === "unlimited") return Number.POSITIVE_INFINITY;
  const value = Number(soft);
  return soft !== undefined && Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/**
 * This process's own soft limit on open files, read once at start (Node raises the soft limit to
 * the hard one as it starts, so this is the hard limit a unit's `LimitNOFILE` or `prlimit` set).
 * Undefined where /proc is not there (macOS, a sandbox): the caller assumes a common limit.
 */
export async function readOpenFilesLimit(): Promise<number | undefined> {
  try {
    return parseOpenFilesLimit(await readFile("/proc/self/limits", "utf8"));
  } catch {
    return undefined;
  }
}
