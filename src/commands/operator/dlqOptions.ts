import { DEAD_LETTER_REASONS, type DeadLetterReason } from "../../core/copyMetadata.js";
import { UsageError, type OptionValues } from "../Command.js";
import type { RedriveTo } from "../../operations/redriveTarget.js";

/** `--to`: where else a redrive may put the copies (see RedriveTo). */
const REDRIVE_TARGETS: readonly Exclude<RedriveTo, undefined>[] = ["lane"];

/** `dlq list` shows this many dead letters unless --limit says otherwise. */
export const DEFAULT_LIMIT = 20;

/** `dlq redrive` moves at most this many entries per second unless --rate says otherwise. */
export const DEFAULT_RATE = 1000;

export const REASON_HELP = `      --reason R      only dead letters of this reason: ${DEAD_LETTER_REASONS.join(", ")}`;

export function reasonOption(values: OptionValues): DeadLetterReason | undefined {
  const reason = values.reason;
  if (reason === undefined) return undefined;
  if (typeof reason !== "string" || !(DEAD_LETTER_REASONS as readonly string[]).includes(reason)) {
    throw new UsageError(
      `--reason expects one of ${DEAD_LETTER_REASONS.join(", ")}, got ${String(reason)}`,
    );
  }
  return reason as DeadLetterReason;
}

export const TO_HELP = `      --to lane       into the group's own retry lane ({orders}:billing:retry), whatever
                      its action, created with its group at id 0 when missing: only this group
                      sees the copies (default: its requeueStream, else the source stream)`;

/** `--to lane`: checked before anything connects. */
export function toOption(values: OptionValues): RedriveTo {
  const to = values.to;
  if (to === undefined) return undefined;
  if (typeof to !== "string" || !(REDRIVE_TARGETS as readonly string[]).includes(to)) {
    throw new UsageError(`--to expects one of ${REDRIVE_TARGETS.join(", ")}, got ${String(to)}`);
  }
  return to as RedriveTo;
}

export const ID_HELP = `      --id ID         only this dead letter (its id in the dead-letter stream, as dlq list
                      shows it); repeat for several`;

/** `--id ID` (repeatable): full stream ids, checked before anything connects. */
export function idsOption(values: OptionValues): string[] | undefined {
  const ids = values.id;
  if (ids === undefined) return undefined;
  const list = Array.isArray(ids) ? ids : [String(ids)];
  for (const id of list) {
    if (!/^\d+-\d+$/u.test(id)) {
      throw new UsageError(
        `--id expects a dead-letter id such as 1700000000000-0 (see dlq list), got ${id}`,
      );
    }
  }
  return list;
}

/**
 * `dlq purge` deletes for good: it must be told what (README "Operating": `--all | --id ID... |
 * --older-than D | --reason R`). `--older-than` and `--reason` combine; `--all` and `--id` stand
 * alone, so that a forgotten filter never widens a purge.
 */
export function checkPurgeSelector(values: OptionValues): void {
  const all = values.all === true;
  const ids = idsOption(values) !== undefined;
  const filters = ["older-than", "older-than-ms", "reason"].filter((n) => values[n] !== undefined);
  if (!all && !ids && filters.length === 0) {
    throw new UsageError(
      "say which dead letters to delete: --all (every dead letter of the group), --id ID..., " +
        "--older-than D or --reason R",
    );
  }
  if (all && (ids || filters.length > 0)) {
    throw new UsageError(
      `--all deletes every dead letter of the group: give it alone, not with ${ids ? "--id" : `--${filters[0] ?? ""}`}`,
    );
  }
  if (ids && filters.length > 0) {
    throw new UsageError(
      `--id selects dead letters by id: it cannot be combined with --${filters[0] ?? ""}`,
    );
  }
}

/** `--id` names dead letters exactly: a filter or a limit beside it would be ambiguous. */
export function checkRedriveIds(values: OptionValues): void {
  if (idsOption(values) === undefined) return;
  const others = ["reason", "older-than", "older-than-ms", "limit"].filter(
    (n) => values[n] !== undefined,
  );
  if (others.length > 0) {
    throw new UsageError(
      `--id selects dead letters by id: it cannot be combined with --${others[0] ?? ""}`,
    );
  }
}

/**
 * Reports on stderr the `--id` ids that are not dead letters of the group (typos, other groups'
 * dead letters, already gone); true when there were some: the command then exits 1.
 */
export function reportUnknownIds(
  stderr: NodeJS.WritableStream,
  command: string,
  groupId: string,
  unknownIds: readonly string[] | undefined,
): boolean {
  if (unknownIds === undefined || unknownIds.length === 0) return false;
  stderr.write(
    `stream-janitor ${command}: not a dead letter of ${groupId}: ${unknownIds.join(", ")}\n`,
  );
  return true;
}

/**
 * `--from-file FILE`: the file says which dead letters and whose; --stream/--group may confirm
 * it, the selectors of a redrive from the dead-letter stream do not apply.
 */
export function checkFromFile(values: OptionValues): void {
  const file = values["from-file"];
  if (typeof file !== "string" || file === "") throw new UsageError("--from-file expects a FILE");
  const others = ["id", "limit", "reason", "older-than", "older-than-ms"].filter(
    (n) => values[n] !== undefined,
  );
  if (others.length > 0) {
    throw new UsageError(
      `--from-file redrives every dead letter of the file: it cannot be combined with --${others[0] ?? ""}`,
    );
  }
}
