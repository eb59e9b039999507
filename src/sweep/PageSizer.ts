/** What one script call reports about itself. */
export interface CallCost {
  /** The call's own duration (Redis TIME inside the script). */
  durationMs: number;
  /** Entries it claimed. */
  claimed: number;
  /** The claim limit it was given. */
  maxClaimed: number;
}

/** The first call of a sweep claims at most this many: cheap even for large entries. */
const INITIAL_CLAIMS = 64;
/** Sizes aim at this share of the budget, so that ordinary jitter stays under it. */
const TARGET_SHARE = 0.8;

/**
 * Sizes the claim limit of successive script calls from what the calls report about their own
 * duration: shrinks at once after a call over the budget (huge entries), grows while calls that
 * used their whole limit stay cheap, never above batchSize. A call that claimed little spent its
 * time looking at the PEL, which the script bounds by the budget itself: it says nothing about
 * the cost of a claim, so it leaves the limit alone.
 */
export class PageSizer {
  private limit: number;

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

  record(call: CallCost): void {
    if (call.claimed === 0) return;
    const perClaimMs = call.durationMs / call.claimed;
    const fitting = Math.max(1, Math.floor((TARGET_SHARE * this.budgetMs) / perClaimMs));
    if (call.durationMs > this.budgetMs) {
      this.limit = Math.max(1, Math.min(this.limit - 1, fitting));
    } else if (call.claimed >= call.maxClaimed && fitting > this.limit) {
      this.limit = Math.min(this.batchSize, this.limit * 2, fitting);
    }
  }
}
