import { JITTER_SHARE } from "../core/jitter.js";

export interface LeaseTimings {
  ttlMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/**
 * client-go's rule, checked by the lease itself (the configuration checks it too, naming the
 * key): ttlMs > renewDeadlineMs, so the leader stops acting before its key can expire; and
 * renewDeadlineMs > (1 + jitter) * retryPeriodMs, so at least one renewal, even the latest one,
 * is sent before the deadline. Throws a RangeError naming the broken half of the rule.
 */
export function checkLeaseTimings({ ttlMs, renewDeadlineMs, retryPeriodMs }: LeaseTimings): void {
  const rule = `rule: ttlMs > renewDeadlineMs > ${1 + JITTER_SHARE} * retryPeriodMs`;
  for (const [name, value] of Object.entries({ ttlMs, renewDeadlineMs, retryPeriodMs })) {
    if (!Number.isFinite(value) || value <= 0) {
      throw new RangeError(`Lease: ${name} must be a positive number of ms, not ${value}`);
    }
  }
  if (ttlMs <= renewDeadlineMs) {
    throw new RangeError(
      `Lease: ttlMs (${ttlMs}) must be more than renewDeadlineMs (${renewDeadlineMs}); ${rule}`,
    );
  }
  // Integer arithmetic where it can be: 1.2 * 3 is 3.5999999999999996 in floating point.
  const tenths = Math.round(JITTER_SHARE * 10);
  if (renewDeadlineMs * 10 <= retryPeriodMs * (10 + tenths)) {
    throw new RangeError(
      `Lease: renewDeadlineMs (${renewDeadlineMs}) must be more than ` +
        `${1 + JITTER_SHARE} * retryPeriodMs (${(retryPeriodMs * (10 + tenths)) / 10}); ${rule}`,
    );
  }
}
