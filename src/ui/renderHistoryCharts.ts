import type { StatusReport } from "../core/groupStatus.js";
import type { HistoryBoard, HistorySeries, HistoryView } from "../status/GroupHistory.js";
import { html, type SafeHtml } from "./html.js";
import { linePath, maxKnown } from "./sparklinePath.js";
import { formatFigure, trendText } from "./trendText.js";

/** The group page's charts, in this order: the levels sampled, then the leader's rates. */
const CHARTS: { series: HistorySeries; label: string; rate: boolean }[] = [
  { series: "lag", label: "lag", rate: false },
  { series: "backlog", label: "backlog", rate: false },
  { series: "pending", label: "pending", rate: false },
  { series: "deadLetters", label: "dead letters", rate: false },
  { series: "claimed", label: "claimed per min", rate: true },
  { series: "requeued", label: "requeued per min", rate: true },
  { series: "deadLettered", label: "dead-lettered per min", rate: true },
];

/** What the group page is given to draw: undefined when the history is off. */
export interface GroupHistoryPart {
  minutes: number;
  view: HistoryView | undefined;
  /** This replica leads (its sweeps count the rates). */
  leading: boolean;
}

/** SVG units: the plot area sits right of the value labels and above the time labels. */
const PLOT = { left: 44, top: 8, width: 268, height: 64 };
const VIEW = { width: 320, height: 92 };

/** HH:MM UTC, the clock the rest of the console writes. */
function clockTime(unixMs: number): string {
  return `${new Date(unixMs).toISOString().slice(11, 16)} UTC`;
}

function chart(points: Float32Array, label: string, minutes: number): SafeHtml {
  const text = trendText(label, points);
  const top = maxKnown(points);
  const d = linePath(points, PLOT, top);
  const bottom = PLOT.top + PLOT.height;
  const right = PLOT.left + PLOT.width;
  return html`<figure class="chart">
    <figcaption>${text}</figcaption>
    <svg viewBox="0 0 ${VIEW.width} ${VIEW.height}" role="img" aria-label="${text}">
      <title>${text}</title>
      <path class="grid" d="M${PLOT.left} ${PLOT.top}H${right}M${PLOT.left} ${bottom}H${right}" />
      <text class="axis" x="${PLOT.left - 4}" y="${PLOT.top + 4}" text-anchor="end">
        ${formatFigure(top)}
      </text>
      <text class="axis" x="${PLOT.left - 4}" y="${bottom + 4}" text-anchor="end">0</text>
      <text class="axis" x="${PLOT.left}" y="${VIEW.height - 2}">-${minutes} min</text>
      <text class="axis" x="${right}" y="${VIEW.height - 2}" text-anchor="end">now</text>
      <path class="line" transform="translate(${PLOT.left} ${PLOT.top})" d="${d}" />
    </svg>
  </figure>`;
}

/**
 * The group page's history section (README "Web console"): one chart per series over the
 * window, server-rendered SVG with its figures in words. The history is in memory only: after a
 * restart the section says since when it is kept. Rates are the sweeps of this replica while it
 * leads: a standby says so instead of drawing nothing without a word.
 */
export function historySection(history: GroupHistoryPart | undefined): SafeHtml {
  if (history === undefined) return html``;
  const { view, leading } = history;
  const heading = html`<h2>Last ${history.minutes} minutes</h2>`;
  if (view === undefined)
    return html`${heading}
      <p class="muted">No history of this group yet.</p>`;
  const windowStartMs = (Math.floor(view.endMs / 60_000) - view.minutes + 1) * 60_000;
  const since =
    view.sinceMs > windowStartMs
      ? html`<p class="note">
          history since ${clockTime(view.sinceMs)} (kept in memory only: it starts again when the
          daemon restarts)
        </p>`
      : "";
  const rateKnown = CHARTS.some(
    (c) => c.rate && view.series[c.series].some((v) => !Number.isNaN(v)),
  );
  const rateNote =
    leading || rateKnown
      ? ""
      : html`<p class="note">
          Claimed, requeued and dead-lettered per minute are counted by the leader as it sweeps:
          this replica is standby.
        </p>`;
  return html`${heading}${since}
    <div class="charts">
      ${CHARTS.map((c) => chart(view.series[c.series], c.label, view.minutes))}
    </div>
    ${rateNote}`;
}

/** A group's part, as of the board's latest sample (the history's minutes are the Redis clock's). */
export function groupHistoryPart(
  history: HistoryBoard,
  groupId: string,
  report: StatusReport,
): GroupHistoryPart {
  return {
    minutes: history.minutes,
    view: history.viewOf(groupId, report.generatedAt),
    leading: report.leader.isLeader,
  };
}
