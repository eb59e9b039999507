import type { Logger } from "pino";
import type { Counter } from "prom-client";

/** Why a POST to /ui/actions/... was refused (the metric's `reason` label). */
export type RefusalReason = "role" | "origin" | "csrf" | "confirmation";

/** At most one log line per remote address in this long. */
const LOG_INTERVAL_MS = 60_000;
/** Addresses remembered at most: beyond it the ones logged over a minute ago are forgotten. */
const MAX_ADDRESSES = 10_000;

/**
 * Counts refused actions (stream_janitor_ui_actions_refused_total{reason}) and logs them at warn,
 * at most once a minute per remote address: a page that posts in a loop does not flood the log.
 */
export class ActionRefusals {
  private readonly lastLogged = new Map<string, number>();
  private readonly now: () => number;

  constructor(
    private readonly counter: Counter,
    private readonly log: Logger,
    now?: () => number,
  ) {
    this.now = now ?? Date.now;
  }

  note(reason: RefusalReason, remoteAddress: string | undefined, detail: Record<string, unknown>) {
    this.counter.inc({ reason });
    const address = remoteAddress ?? "unknown";
    const now = this.now();
    const last = this.lastLogged.get(address);
    if (last !== undefined && now - last < LOG_INTERVAL_MS) return;
    if (this.lastLogged.size >= MAX_ADDRESSES) this.forgetOld(now);
    this.lastLogged.set(address, now);
    this.log.warn(
      { remoteAddress: address, reason, ...detail },
      `console action refused (${reason}); further refusals from this address within a minute are only counted (stream_janitor_ui_actions_refused_total)`,
    );
  }

  private forgetOld(now: number): void {
    for (const [address, at] of this.lastLogged) {
      if (now - at >= LOG_INTERVAL_MS) this.lastLogged.delete(address);
    }
    // Still full (a flood from many addresses within a minute): start over.
    if (this.lastLogged.size >= MAX_ADDRESSES) this.lastLogged.clear();
  }
}
