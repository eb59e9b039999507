/**
 * Backoff tiers (README "Backoff: later deliveries wait longer": `backoffMs`, `backoffJitter`):
 * how long a pending entry must idle before a sweep claims it. The sweep script computes the same thing per entry in
 * src/scripts/lua/includes/backoff.lua; this is its exact mirror (a test runs both over many ids),
 * used where TypeScript needs the answer (the due-entries gauge, tests).
 *
 * Exactness: every step is an integer operation on values below 2^41, so Lua's doubles and
 * JavaScript's numbers give the same bits. The id is read as text (its parts may exceed 2^53):
 * only the last 6 digits of each part take part in the jitter.
 */

/** What the script receives: thresholds already raised to minIdleMs, and the jitter in 1/1000. */
export interface BackoffPolicy {
  /** max(minIdleMs, backoffMs[k]) for each tier; [minIdleMs] when backoffMs is empty. */
  tiers: readonly number[];
  /** backoffJitter in thousandths (0..500). */
  jitterPermille: number;
  /** deadLetterAfterIdleMs (0: off): an entry idle this long is due whatever its tier. */
  deadLetterAfterIdleMs: number;
  /**
   * An entry delivered more times than this (its PEL count) is due whatever its idle time and
   * tier: the sweep dead-letters it. Infinity for `monitor`, which never claims.
   */
  passedAfterDeliveries: number;
}

/** The jitter in thousandths, as the script gets it (backoffJitter is checked to be 0..0.5). */
function jitterPermille(backoffJitter: number): number {
  return Math.round(backoffJitter * 1000);
}

export function backoffPolicy(group: {
  minIdleMs: number;
  backoffMs?: readonly number[];
  backoffJitter?: number;
  deadLetterAfterIdleMs?: number;
  maxDeliveries?: number;
  action?: string;
}): BackoffPolicy {
  const list = group.backoffMs ?? [];
  const tiers =
    list.length === 0 ? [group.minIdleMs] : list.map((ms) => Math.max(group.minIdleMs, ms));
  return {
    tiers,
    jitterPermille: jitterPermille(group.backoffJitter ?? 0),
    deadLetterAfterIdleMs: group.deadLetterAfterIdleMs ?? 0,
    passedAfterDeliveries:
      group.action === "monitor" ? Infinity : (group.maxDeliveries ?? Infinity),
  };
}

/** The last (at most) 6 digits of a decimal string, as a number. */
function lowDigits(digits: string): number {
  return Number(digits.slice(Math.max(0, digits.length - 6)));
}

/**
 * The entry's jitter in thousandths, in [-spread, spread]: a fixed function of its id, so its
 * turn does not move from sweep to sweep. A linear mix of the id's low digits, scrambled by one
 * step of the Park-Miller generator so that neighbouring ids spread over the whole range.
 */
function jitterOffset(id: string, spread: number): number {
  if (spread === 0) return 0;
  const dash = id.indexOf("-");
  const msLow = lowDigits(id.slice(0, dash));
  const seqLow = lowDigits(id.slice(dash + 1));
  const mixed = (msLow * 7919 + seqLow * 104729) % 1000003;
  const scrambled = (mixed * 48271) % 2147483647;
  return (scrambled % (2 * spread + 1)) - spread;
}

/** The idle time (ms) from which an entry delivered `deliveries` times is due. */
export function dueAfterMs(policy: BackoffPolicy, id: string, deliveries: number): number {
  const { tiers, jitterPermille: spread } = policy;
  if (deliveries > policy.passedAfterDeliveries) return 0;
  const tier = Math.min(Math.max(deliveries, 1), tiers.length);
  const base = tiers[tier - 1] ?? 0;
  const threshold =
    spread === 0 ? base : Math.floor((base * (1000 + jitterOffset(id, spread))) / 1000);
  if (policy.deadLetterAfterIdleMs <= 0) return threshold;
  // As the script does: from deadLetterAfterIdleMs on (never below the lowest threshold, where
  // XAUTOCLAIM starts), an entry is due whatever its tier, and is dead-lettered (max-idle).
  const lowest = Math.floor((Math.min(...tiers) * (1000 - spread)) / 1000);
  return Math.min(threshold, Math.max(policy.deadLetterAfterIdleMs, lowest));
}
