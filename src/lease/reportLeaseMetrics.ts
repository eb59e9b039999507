import type { EventEmitter } from "node:events";
import type { LeaseEvents, LeaseMetrics } from "./types.js";

/**
 * The lease's own series follow its terms (client-go's elector owns its metrics the same way):
 * leader is 1 from "acquired" to "lost", fencing_token is the current term's token, and a
 * superseded term counts one token move (still the leader: "acquired" follows at once).
 */
export function reportLeaseMetrics(lease: EventEmitter<LeaseEvents>, metrics: LeaseMetrics): void {
  lease.on("acquired", (term) => {
    metrics.leader.set(1);
    metrics.fencingToken.set(term.fencingToken);
  });
  lease.on("lost", (reason) => {
    if (reason === "superseded") metrics.fencingTokenMoves.inc();
    else metrics.leader.set(0);
  });
}
