/**
 * Every periodic wait (standby attempts, sweep passes, PEL scans) is stretched by up to this share
 * at random, so that replicas started together do not stay in step. The lease's timing rule
 * (src/core/leaseTimingRule.ts) follows this value.
 */
export const JITTER_SHARE = 0.2;

/** `ms` plus 0 to JITTER_SHARE of it; `random` returns [0, 1) like Math.random. */
export function withJitter(ms: number, random: () => number): number {
  return ms * (1 + JITTER_SHARE * random());
}
