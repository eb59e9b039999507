/** Waits `ms` milliseconds (injected so that tests can drive a virtual clock). */
export type Sleep = (ms: number) => Promise<void>;

export interface RateLimiterOptions {
  /** Entries per second; 0 means unlimited. */
  ratePerSecond: number;
  /** Monotonic milliseconds. */
  now?: () => number;
  sleep?: Sleep;
}

const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A token bucket for paged work: before a page, `acquire(max)` waits until at least one entry
 * may go and grants up to `max`; after it, `refund()` returns what the page did not use (entries
 * of other groups that were only scanned). The bucket holds a tenth of a second of entries, so
 * pages stay small at low rates and the rate holds over any window longer than that.
 */
export class RateLimiter {
  private readonly ratePerMs: number;
  private readonly capacity: number;
  private readonly now: () => number;
  private readonly sleep: Sleep;
  private tokens: number;
  private refilledAt: number;

  constructor(options: RateLimiterOptions) {
    if (!Number.isFinite(options.ratePerSecond) || options.ratePerSecond < 0) {
      throw new RangeError(`rate must be a number >= 0, got ${options.ratePerSecond}`);
    }
    this.ratePerMs = options.ratePerSecond / 1000;
    this.capacity = Math.max(1, Math.ceil(options.ratePerSecond / 10));
    this.now = options.now ?? (() => performance.now());
    this.sleep = options.sleep ?? realSleep;
    this.tokens = this.capacity;
    this.refilledAt = this.now();
  }

  get unlimited(): boolean {
    return this.ratePerMs === 0;
  }

  /** Resolves to how many entries (1..max) may go now. */
  async acquire(max: number): Promise<number> {
    if (max <= 0) return 0;
    if (this.unlimited) return max;
    this.refill();
    if (this.tokens < 1) {
      await this.sleep(Math.ceil((1 - this.tokens) / this.ratePerMs));
      this.refill();
    }
    const granted = Math.max(1, Math.min(max, Math.floor(this.tokens)));
    this.tokens -= granted;
    return granted;
  }

  refund(count: number): void {
    if (this.unlimited || count <= 0) return;
    this.tokens = Math.min(this.capacity, this.tokens + count);
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(this.capacity, this.tokens + (now - this.refilledAt) * this.ratePerMs);
    this.refilledAt = now;
  }
}
