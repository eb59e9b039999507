import type { Logger } from "pino";
import type { LeaseLockPort } from "./types.js";

/** A lease key nothing will expire stops every sweep: said at error, this often. */
const KEY_WITHOUT_TTL_LOG_INTERVAL_MS = 60_000;

/**
 * What a standby says about the lease: at info who leads, once per change of leader; and at
 * error, once per minute, when the key has no TTL: redlock always sets one, so nothing will ever
 * free that key.
 */
export class StandbyReport {
  /** The holder last reported, so that it is said once per change of leader. */
  private lastHolderSeen = "";
  /** When a lease key without TTL was last logged (monotonic ms); undefined while there is none. */
  private keyWithoutTtlLoggedAt: number | undefined;

  constructor(
    private readonly lock: Pick<LeaseLockPort, "holder" | "keyState">,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {}

  /** This process leads now: the next standby report says who leads again. */
  reset(): void {
    this.lastHolderSeen = "";
  }

  /** After an attempt that found the lease held. */
  async report(): Promise<void> {
    await this.reportKeyWithoutTtl();
    const holder = await this.lock.holder().catch(() => "unknown" as const);
    const seen = JSON.stringify(holder ?? null);
    if (seen === this.lastHolderSeen) return;
    this.lastHolderSeen = seen;
    if (holder === undefined) return;
    if (holder === "unknown") {
      this.log.info("standing by: the lease is held by a process that left no holder record");
      return;
    }
    this.log.info(
      { leader: { host: holder.host, pid: holder.pid, fencingToken: holder.fencingToken } },
      `standing by: the lease is held by ${holder.host} (pid ${holder.pid})`,
    );
  }

  private async reportKeyWithoutTtl(): Promise<void> {
    // Unknown (Redis slow, or an ACL without PTTL): the holder report says what it can.
    const state = await this.lock.keyState().catch(() => undefined);
    if (state === undefined || state.value === null || state.pttlMs !== -1) {
      this.keyWithoutTtlLoggedAt = undefined;
      return;
    }
    const now = this.now();
    const last = this.keyWithoutTtlLoggedAt;
    if (last !== undefined && now - last < KEY_WITHOUT_TTL_LOG_INTERVAL_MS) return;
    this.keyWithoutTtlLoggedAt = now;
    const shown = state.value.length > 200 ? `${state.value.slice(0, 200)}...` : state.value;
    this.log.error(
      { value: state.value, pttlMs: state.pttlMs },
      `the lease key holds ${JSON.stringify(shown)} with no TTL: no janitor can acquire it and ` +
        "nothing is swept until it is removed (check with GET and PTTL, then DEL it once sure " +
        "that no other janitor runs; see the runbook)",
    );
  }
}
