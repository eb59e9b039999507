/** What one script call reports about itself. */
export interface CallCost {
  /** The call's own duration (Redis TIME inside the script). */
  durationMs: number;
  /** Of which claiming and handling the claimed entries; the rest went into reading the PEL. */
  claimMs: number;
  /** Entries it claimed. */
  claimed: number;
  /** The claim limit it was given. */
  maxClaimed: number;
  /** PEL entries it looked at. */
  examined: number;
}

/** The first call of a sweep claims at most this many: cheap even for large entries. */
const INITIAL_CLAIMS = 64;
/** The script's own cap on one window. */
const MAX_WINDOW = 10_000;
/** Sizes aim at this share of the budget, so that ordinary jitter stays under it. */
const TARGET_SHARE = 0.8;

/**
 * Sizes the claim limit of successive script calls from what the calls report about their own
 * claims: shrinks at once after a call over the budget whose claims did not fit (huge entries),
 * grows while calls that used their whole limit stay cheap, never above batchSize. Only the time
 * of the claims counts: the time spent reading a mostly fresh PEL is bounded by the script
 * itself (it starts no window once the budget is spent) and says nothing about a claim's cost.
 */
export class PageSizer {
  private limit: number;
  private lastExamined = 0;

  constructor(
    private readonly batchSize: number,
    private readonly budgetMs: number,
  ) {
    this.limit = Math.min(batchSize, INITIAL_CLAIMS);
  }

  /** The claim limit for the next call. */
  get maxClaimed(): number {
    return this.limit;
  }

  /**
   * The first PEL window of the next call: half of what the last call looked at (a sparse PEL
   * is read in large windows from the start), never less than the claim limit. Claims stay
   * bounded by the claim limit whatever the window.
   */
  get firstWindow(): number {
    return Math.min(MAX_WINDOW, Math.max(this.limit, Math.floor(this.lastExamined / 2)));
  }

  record(call: CallCost): void {
    this.lastExamined = call.examined;
    if (call.claimed === 0) return;
    const perClaimMs = Math.max(call.claimMs, Number.EPSILON) / call.claimed;
    const fitting = Math.max(1, Math.floor((TARGET_SHARE * this.budgetMs) / perClaimMs));
    if (call.durationMs > this.budgetMs) {
      if (fitting < this.limit) this.limit = fitting;
    } else if (call.claimed >= call.maxClaimed && fitting > this.limit) {
      this.limit = Math.min(this.batchSize, this.limit * 2, fitting);
    }
  }
}
