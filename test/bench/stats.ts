/** Small descriptive statistics for the tables. */

function sorted(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/** Nearest-rank percentile (p in 0..100) of a non-empty list; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const ordered = sorted(values);
  const rank = Math.min(ordered.length, Math.max(1, Math.ceil((p / 100) * ordered.length)));
  return ordered[rank - 1] ?? Number.NaN;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

export function max(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  return values.reduce((best, value) => (value > best ? value : best), -Infinity);
}

export function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
