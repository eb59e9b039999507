import type { DeadLetterReason } from "../core/copyMetadata.js";
import { flagArg } from "./scriptReplies.js";
import type { ScriptArg } from "./scriptedRedis.js";

/**
 * The page of dead letters a purge or a redrive call works on, passed to both scripts in the
 * same ARGV positions: a range of the dead-letter stream, or the given ids.
 */
export interface DeadLetterSelection {
  /** x-original-stream of the dead letters selected. */
  stream: string;
  /** x-original-group of the dead letters selected. */
  group: string;
  /** Undefined: any reason. */
  reason: DeadLetterReason | undefined;
  /** The page starts after this id (exclusive); 0-0 to start. Ignored with ids. */
  cursor: string;
  /** The page ends at this id (inclusive). Ignored with ids. */
  endId: string;
  /** At most this many dead letters are examined. Ignored with ids. */
  scanLimit: number;
  /** At most this many are removed (moved or deleted). */
  limit: number;
  /** Count only, write nothing. */
  dryRun: boolean;
  /** The dead letters to look up instead of a range (`--id`); undefined or empty: the range. */
  ids?: readonly string[] | undefined;
}

/** ARGV of both dead-letter scripts (see the headers of their Lua files). */
export function selectionArgv(selection: DeadLetterSelection): ScriptArg[] {
  return [
    selection.stream,
    selection.group,
    selection.cursor,
    selection.endId,
    selection.scanLimit,
    selection.limit,
    selection.reason ?? "",
    flagArg(selection.dryRun),
    ...(selection.ids ?? []),
  ];
}
