/** The box a line is drawn in (SVG user units): x from 0 to width, y from 0 (top) to height. */
interface PlotBox {
  width: number;
  height: number;
}

/**
 * At most `maxPoints` points: each run of consecutive points becomes its last known value (the
 * downsampling the history itself does per minute), so a long window draws no wider a path.
 */
export function thinPoints(values: ArrayLike<number>, maxPoints: number): number[] {
  const step = Math.max(1, Math.ceil(values.length / Math.max(1, maxPoints)));
  const out: number[] = [];
  for (let start = 0; start < values.length; start += step) {
    let value = Number.NaN;
    for (let i = start; i < Math.min(values.length, start + step); i += 1) {
      const v = values[i] ?? Number.NaN;
      if (!Number.isNaN(v)) value = v;
    }
    out.push(value);
  }
  return out;
}

/** The largest known value; 0 when none is known (or all are 0). */
export function maxKnown(values: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < values.length; i += 1) {
    const v = values[i] ?? Number.NaN;
    if (v > max) max = v;
  }
  return max;
}

/** One decimal: enough for a chart a few hundred units wide. */
const round1 = (n: number): number => Math.round(n * 10) / 10;

/**
 * An SVG path `d` of the points, oldest left, newest right, scaled so `top` is the top of the box
 * (0 at the bottom): unknown points (NaN) break the line rather than draw a made-up 0, and a
 * point known alone is drawn as a dot-long segment. Coordinates have at most one decimal (or
 * what `round` keeps), and a run of segments is written `L` once (SVG repeats it), so 60 points
 * cost a few hundred bytes.
 */
export function linePath(
  values: ArrayLike<number>,
  box: PlotBox,
  top: number,
  round: (n: number) => number = round1,
): string {
  const n = values.length;
  const xStep = n > 1 ? box.width / (n - 1) : 0;
  const scale = top > 0 ? box.height / top : 0;
  let d = "";
  let drawing = false;
  for (let i = 0; i < n; i += 1) {
    const v = values[i] ?? Number.NaN;
    if (Number.isNaN(v)) {
      drawing = false;
      continue;
    }
    const x = round(i * xStep);
    const y = round(box.height - Math.min(v, top) * scale);
    const next = values[i + 1] ?? Number.NaN;
    if (!drawing) {
      d += `${d === "" ? "" : " "}M${x} ${y}`;
      // A point with no known neighbour on the right still shows (a short flat stroke).
      if (Number.isNaN(next)) d += `h${round(Math.max(1, xStep / 2))}`;
      else d += "L";
      drawing = !Number.isNaN(next);
      continue;
    }
    d += d.endsWith("L") ? `${x} ${y}` : ` ${x} ${y}`;
  }
  return d;
}
