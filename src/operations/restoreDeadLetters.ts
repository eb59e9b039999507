import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { Progress } from "../core/Progress.js";
import {
  argvSize,
  runRestoreDeadLetters,
  type SavedDeadLetter,
} from "../scripts/restoreDeadLetters.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";
import type { RateLimiter } from "./RateLimiter.js";
import { RedriveRefusedError } from "./redriveDeadLetters.js";
import { prepareRedriveTarget, redriveView, type RedriveTo } from "./redriveTarget.js";

/** The restored ids are remembered this long: a file restored again later is written again. */
export const RESTORED_RETENTION_MS = 30 * 24 * 3_600_000;

/**
 * At most this many ARGV values per script call: redis.call passes the values of one XADD on the
 * Lua C stack (about 8000), and a batch stays well under it. A dead letter larger than that
 * cannot be copied inside one script call and is left out (reported).
 */
const MAX_BATCH_VALUES = 7800;
const MAX_BATCH_LETTERS = 100;

export interface RestoreOptions {
  dryRun: boolean;
  to?: RedriveTo;
  limiter: RateLimiter;
  progress?: Progress;
  /** Stops at the next batch boundary; what was written stays written (and remembered). */
  signal?: AbortSignal;
}

export interface RestoreSummary {
  /** Written (in a dry run: that would be). */
  redriven: number;
  /** Dead letters in the file. */
  total: number;
  /** Skipped: restored before. */
  alreadyRestored: number;
  dryRun: boolean;
  target: string;
  oversizedIds?: string[];
}

/** Batches under MAX_BATCH_VALUES (and the limiter's grant); the oversized ones apart. */
function nextBatch(
  letters: readonly SavedDeadLetter[],
  from: number,
  maxLetters: number,
): SavedDeadLetter[] {
  const batch: SavedDeadLetter[] = [];
  let size = 0;
  for (let i = from; i < letters.length && batch.length < maxLetters; i += 1) {
    const letter = letters[i];
    if (letter === undefined || size + argvSize(letter) > MAX_BATCH_VALUES) break;
    batch.push(letter);
    size += argvSize(letter);
  }
  return batch;
}

/**
 * Writes the saved dead letters back to the group's requeue target (or, `to: "lane"`, its retry
 * lane), as `dlq redrive` writes a redriven copy, one script call per batch
 * (scripts/restoreDeadLetters.lua), each dead letter once however often the file is run. The
 * target read by other groups is refused before anything is written, as by `dlq redrive`.
 */
export async function restoreDeadLetters(
  redis: ScriptedRedis,
  configured: ResolvedGroup,
  letters: readonly SavedDeadLetter[],
  options: RestoreOptions,
): Promise<RestoreSummary> {
  const group = redriveView(configured, options.to);
  const conflict = await prepareRedriveTarget(redis, group, options.dryRun);
  if (conflict !== undefined) throw new RedriveRefusedError(conflict);
  const fits = letters.filter((letter) => argvSize(letter) <= MAX_BATCH_VALUES);
  const oversizedIds = letters.filter((l) => argvSize(l) > MAX_BATCH_VALUES).map((l) => l.id);
  const summary: RestoreSummary = {
    redriven: 0,
    total: letters.length,
    alreadyRestored: 0,
    dryRun: options.dryRun,
    target: group.requeueStream,
    ...(oversizedIds.length > 0 ? { oversizedIds } : {}),
  };
  options.progress?.start(fits.length);
  try {
    for (let next = 0; next < fits.length && options.signal?.aborted !== true;) {
      const ask = Math.min(MAX_BATCH_LETTERS, fits.length - next);
      const allowed = options.dryRun ? ask : await options.limiter.acquire(ask);
      const batch = nextBatch(fits, next, allowed);
      next += batch.length;
      const result = await runRestoreDeadLetters(redis, {
        group,
        target: group.requeueStream,
        batch,
        dryRun: options.dryRun,
        retentionMs: RESTORED_RETENTION_MS,
      });
      if (!options.dryRun) options.limiter.refund(allowed - result.restored);
      summary.redriven += result.restored;
      summary.alreadyRestored += result.already;
      options.progress?.update(next);
    }
  } finally {
    options.progress?.stop();
  }
  return summary;
}
