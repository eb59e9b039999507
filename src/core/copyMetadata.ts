/**
 * The metadata fields the scripts write on the copies they make, in the order they write them.
 * The Lua side is src/scripts/lua/includes/metadata.lua; test/scripts/sharedConstants.test.ts
 * checks that both hold the same lists.
 */

/** A requeued copy: the original's id, and its deliveries so far. */
export const REQUEUE_METADATA = ["x-original-id", "x-delivery-count"] as const;

/** A dead letter: where it came from, why, when, and which consumer held it last. */
export const DEAD_LETTER_METADATA = [
  "x-original-id",
  "x-original-stream",
  "x-original-group",
  "x-delivery-count",
  "x-dead-letter-reason",
  "x-dead-lettered-at",
  "x-last-consumer",
] as const;

/** Added to a redriven copy (which also carries x-original-id, and x-delivery-count 0). */
export const REDRIVE_METADATA = ["x-redrive-count", "x-redriven-at"] as const;

/** Every metadata field a dead letter (or a redriven copy) may carry, recognised by name. */
export const METADATA_FIELDS: readonly string[] = [...DEAD_LETTER_METADATA, ...REDRIVE_METADATA];

/**
 * Why an entry was dead-lettered: the value of its x-dead-letter-reason. Every reason the sweep
 * writes, in one list: the `--reason` options, the metric labels (dead_lettered_entries_total)
 * and includes/metadata.lua (DEAD_LETTER_REASONS, checked equal by a test) follow it.
 */
export const DEAD_LETTER_REASONS = ["max-deliveries", "action", "max-idle"] as const;
export type DeadLetterReason = (typeof DEAD_LETTER_REASONS)[number];
