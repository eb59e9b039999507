/**
 * The ids an event can name for a `--id` run: those asked for, less the ones reported as not
 * done; only when that accounts for every entry done (an interrupted run may have stopped before
 * some). Without `--id` the page scripts return counts, not ids: none.
 */
export function doneIds(
  requested: readonly string[] | undefined,
  done: number,
  notDone: readonly string[],
): string[] {
  if (requested === undefined) return [];
  const skipped = new Set(notDone);
  const ids = requested.filter((id) => !skipped.has(id));
  return ids.length === done ? ids : [];
}
