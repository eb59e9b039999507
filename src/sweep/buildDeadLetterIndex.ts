import type { ResolvedGroup } from "../core/resolveGroup.js";
import { runIndexDeadLetters } from "../scripts/indexDeadLetters.js";
import type { Fence } from "../core/fence.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";

/** Dead letters looked at per call: their bodies are read (once), so pages stay small. */
const INDEX_PAGE = 200;
/** Calls per sweep of the group: the build goes on at the next sweep, from its cursor. */
const INDEX_PAGES_PER_SWEEP = 10;

/**
 * Builds the group's dead-letter index from its dead-letter stream (dead letters written before
 * the index existed), a few bounded, fenced pages per sweep until complete
 * (scripts/lua/indexDeadLetters.lua). Until then the per-group count is reported as not exact.
 * Returns whether the index is complete.
 */
export async function buildDeadLetterIndex(
  group: ResolvedGroup,
  context: { redis: ScriptedRedis; fence: () => Fence | undefined },
  signal: AbortSignal,
): Promise<boolean> {
  for (let page = 0; page < INDEX_PAGES_PER_SWEEP && !signal.aborted; page += 1) {
    const { complete } = await runIndexDeadLetters(context.redis, {
      group,
      pageSize: INDEX_PAGE,
      fence: context.fence(),
    });
    if (complete) return true;
  }
  return false;
}
