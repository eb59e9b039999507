import type { Logger } from "pino";
import type { ActiveTerm } from "./ActiveTerm.js";
import type { LeaderTerm, LeaseLockPort, LostReason } from "./types.js";

/** What a token move needs of the Lease. */
export interface TokenMoveHooks {
  lock: Pick<LeaseLockPort, "moveTokenPast">;
  log: Logger;
  /** True while `term` is the Lease's active one. */
  isActive: (term: ActiveTerm) => boolean;
  endTerm: (term: ActiveTerm, reason: LostReason) => void;
  /** The token moved: `view` was superseded by `next` (the Lease tells its listeners). */
  superseded: (view: LeaderTerm, next: LeaderTerm) => void;
}

/**
 * See LeaderTerm.moveTokenPast. The lease value is checked by Redis in the same script that
 * moves the counter, so only the process that holds the lease can move it; this process's own
 * view must also still be the current, live one (its deadline has not passed).
 */
export async function moveTermToken(
  hooks: TokenMoveHooks,
  term: ActiveTerm,
  view: LeaderTerm,
  fenceSeen: number,
  context: Record<string, unknown> = {},
): Promise<LeaderTerm | undefined> {
  const live = (): boolean => hooks.isActive(term) && term.view === view && !term.ended;
  if (!live()) return undefined;
  if (fenceSeen <= view.fencingToken) return undefined;
  const token = await hooks.lock.moveTokenPast(term.value, fenceSeen);
  if (token === undefined) {
    // Redis says the key does not hold our value: the lease is gone, say so now.
    if (live()) hooks.endTerm(term, "lease-taken");
    return undefined;
  }
  // The deadline passed (or another move won) while the script ran: the counter moved, but
  // only a live term may act on it.
  if (!live()) return undefined;
  const next = term.supersede(token);
  hooks.log.warn(
    { ...context, fencingToken: token, previousToken: view.fencingToken, fenceSeen },
    "fencing token moved past a fence left by an earlier term (the token counter went back: " +
      "a failover before it replicated, or a DEL); acting under the new token",
  );
  hooks.superseded(view, next);
  return next;
}
