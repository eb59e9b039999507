import type { HistoryBoard } from "../status/GroupHistory.js";
import { html, type SafeHtml } from "./html.js";
import { linePath, maxKnown, thinPoints } from "./sparklinePath.js";
import { trendText } from "./trendText.js";

/**
 * The overview's sparkline: at most 60 points (a longer window is thinned), 59 × 16 units, whole
 * units only: a thousand rows of it stay small (README "Web console": the overview's size).
 */
const SPARK = { width: 59, height: 16, points: 60 };

/** The overview's column heading for the sparklines. */
export function sparklineHeading(history: HistoryBoard): SafeHtml {
  return html`<th>lag, ${history.minutes} min</th>`;
}

/**
 * One overview row's lag over the window as an inline SVG (no script, no request): its text
 * alternative (trendText) is its `<title>`, both the accessible name of the image and the
 * tooltip (no aria-label beside it: a thousand rows would carry every text twice); colours come
 * from the stylesheet, so the line reads in the dark theme too.
 */
export function sparklineCell(
  history: HistoryBoard,
  stream: string,
  group: string,
  endMs: number,
): SafeHtml {
  // The group's id as resolveGroup makes it (src/core/resolveGroup.ts).
  const points = history.seriesOf(`${stream}/${group}`, "lag", endMs);
  if (points === undefined) return html`<td class="muted">-</td>`;
  const label = trendText("lag", points);
  const thin = thinPoints(points, SPARK.points);
  const box = { width: SPARK.width, height: SPARK.height };
  const d = linePath(thin, box, maxKnown(thin), Math.round);
  return html`<td class="spark">
    <svg class="spark" viewBox="-1 -1 ${SPARK.width + 2} ${SPARK.height + 2}" role="img">
      <title>${label}</title>
      <path d="${d}" />
    </svg>
  </td>`;
}
