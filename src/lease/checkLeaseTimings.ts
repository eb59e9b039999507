import { leaseTimingProblem, type LeaseTimings } from "../core/leaseTimingRule.js";

/**
 * The Lease's own check of the timing rule (leaseTimingProblem, which the configuration checks
 * too, naming the key): a RangeError naming the broken half of the rule.
 */
export function checkLeaseTimings(timings: LeaseTimings): void {
  const problem = leaseTimingProblem(timings);
  if (problem === undefined) return;
  const { key, value, expected } = problem;
  throw new RangeError(
    Number.isFinite(value) && value > 0
      ? `Lease: ${key} (${value}) must be ${expected}`
      : `Lease: ${key} must be ${expected}, not ${value}`,
  );
}
