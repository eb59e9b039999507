import { JITTER_SHARE } from "./jitter.js";

export interface LeaseTimings {
  ttlMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/** The broken half of the rule: the key blamed, its value, and what it must be instead. */
export interface LeaseTimingProblem {
  key: keyof LeaseTimings;
  value: number;
  expected: string;
}

/**
 * client-go's leader-election rule, the one copy (the configuration refuses with exit 78, the
 * Lease with a RangeError): ttlMs > renewDeadlineMs, so the leader stops acting before its key can
 * expire; and renewDeadlineMs > (1 + jitter) * retryPeriodMs, so at least one renewal, even the
 * latest one, is sent before the deadline. Blames the key client-go blames; undefined when the
 * timings keep the rule. `name` words the other key in `expected` (the configuration's full path).
 */
export function leaseTimingProblem(
  timings: LeaseTimings,
  name: (key: keyof LeaseTimings) => string = (key) => key,
): LeaseTimingProblem | undefined {
  for (const key of ["ttlMs", "renewDeadlineMs", "retryPeriodMs"] as const) {
    const value = timings[key];
    if (!Number.isFinite(value) || value <= 0) {
      return { key, value, expected: "a positive number of ms" };
    }
  }
  const { ttlMs, renewDeadlineMs, retryPeriodMs } = timings;
  const rule = `rule: ttlMs > renewDeadlineMs > ${1 + JITTER_SHARE} * retryPeriodMs`;
  if (ttlMs <= renewDeadlineMs) {
    const expected = `more than ${name("renewDeadlineMs")} (${renewDeadlineMs}); ${rule}`;
    return { key: "ttlMs", value: ttlMs, expected };
  }
  // Integer arithmetic where it can be (the jitter is a whole number of thousandths): 1.2 * 3 is
  // 3.5999999999999996 in floating point.
  const scaled = 1000 + Math.round(JITTER_SHARE * 1000);
  if (renewDeadlineMs * 1000 <= retryPeriodMs * scaled) {
    const bound = (retryPeriodMs * scaled) / 1000;
    const expected = `more than ${1 + JITTER_SHARE} * ${name("retryPeriodMs")} (${bound}); ${rule}`;
    return { key: "renewDeadlineMs", value: renewDeadlineMs, expected };
  }
  return undefined;
}
