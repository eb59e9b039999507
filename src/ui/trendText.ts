const NUMBER = new Intl.NumberFormat("en-US", { maximumFractionDigits: 1 });

/** 1,204 and 0.5: the figures of a text alternative, as a person reads them aloud. */
export function formatFigure(value: number): string {
  return NUMBER.format(value);
}

/**
 * A line's text alternative, with its figures in words (README "Web console"): "lag 1,204,
 * rising from 310 over 60 min", "pending 0, steady over 12 min", "peak" when the line went
 * above both ends. Points are one per minute, oldest first, NaN unknown; the span runs from the
 * first known point to the end of the window (a history younger than the window says so).
 */
export function trendText(label: string, values: ArrayLike<number>): string {
  let first = -1;
  let last = -1;
  let peak = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < values.length; i += 1) {
    const v = values[i] ?? Number.NaN;
    if (Number.isNaN(v)) continue;
    if (first < 0) first = i;
    last = i;
    if (v > peak) peak = v;
  }
  if (first < 0) return `${label}: no samples in the last ${values.length} min`;
  const from = values[first] ?? 0;
  const now = values[last] ?? 0;
  const span = values.length - first;
  const trend =
    now > from
      ? `rising from ${formatFigure(from)}`
      : now < from
        ? `falling from ${formatFigure(from)}`
        : "steady";
  const peakText = peak > now && peak > from ? `, peak ${formatFigure(peak)}` : "";
  return `${label} ${formatFigure(now)}, ${trend} over ${span} min${peakText}`;
}
