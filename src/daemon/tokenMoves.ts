import type { Logger } from "pino";
import type { LeaderTerm } from "../lease/types.js";

/**
 * Token moves one pass may make (each past a higher fence than the last): enough for fences left
 * by several forgotten terms, bounded so that a pass always ends.
 */
export const MAX_TOKEN_MOVES_PER_PASS = 8;

/**
 * Redis Cluster: a stream's fence holds `fenceSeen`, above the term's token. The next term, or
 * undefined when the token could not (or must not) move; a failure is logged and the next pass
 * tries again.
 */
export async function moveTokenPast(
  term: LeaderTerm,
  fenceSeen: number,
  where: { stream: string; group?: string },
  log: Logger,
): Promise<LeaderTerm | undefined> {
  if (term.moveTokenPast === undefined) return undefined;
  try {
    return await term.moveTokenPast(fenceSeen, where);
  } catch (error) {
    log.warn(
      { err: error, ...where, fenceSeen },
      "could not move the fencing token past a stream's fence; the next pass tries again",
    );
    return undefined;
  }
}
