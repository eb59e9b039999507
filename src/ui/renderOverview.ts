import { GROUP_STATUSES, type StatusReport } from "../core/groupStatus.js";
import { formatCount, formatDuration, formatTime, oldestPendingIdle, UNKNOWN } from "./format.js";
import { html, type SafeHtml } from "./html.js";
import { overviewParams, type OverviewQuery, type SortKey } from "./overviewQuery.js";
import { overviewPage, type OverviewRow } from "./overviewRows.js";
import { renderPage } from "./renderPage.js";
import { sparklineCell, sparklineHeading } from "./renderSparkline.js";
import type { HistoryBoard } from "../status/GroupHistory.js";
import { refreshTools, statusBadge } from "./pieces.js";
import type { SweepLog } from "./SweepLog.js";
import { groupHref, uiHref } from "./urls.js";

export interface OverviewView {
  report: StatusReport;
  sweeps: SweepLog;
  query: OverviewQuery;
  refreshSeconds: number;
  /** Each group's lag over the last minutes, when the history is on (README "Web console"). */
  history?: HistoryBoard;
}

const COLUMNS: [SortKey | undefined, string, boolean][] = [
  ["status", "status", false],
  ["stream", "stream", false],
  ["group", "group", false],
  [undefined, "reason", false],
  ["lag", "lag", true],
  ["lagAge", "lag age", true],
  ["pending", "pending", true],
  ["oldest", "oldest pending", true],
  ["due", "due", true],
  ["deadLetters", "dead letters", true],
  ["retryLane", "retry lane", true],
  [undefined, "lane lag", true],
  [undefined, "lane pending", true],
  ["lastSweep", "last sweep", true],
];

function headerCell(query: OverviewQuery, key: SortKey | undefined, label: string, num: boolean) {
  const cls = num ? "num" : undefined;
  if (key === undefined) return html`<th class="${cls}">${label}</th>`;
  const active = query.sort === key;
  const descending = active ? !query.descending : false;
  const href = uiHref("/ui", overviewParams(query, { sort: key, descending, page: 1 }));
  const arrow = active ? (query.descending ? " ▼" : " ▲") : "";
  return html`<th
    class="${cls}"
    aria-sort="${active ? (query.descending ? "descending" : "ascending") : "none"}"
  >
    <a href="${href}">${label}</a>${arrow}
  </th>`;
}

/** The column headings; the lag's sparklines beside the lag when the history is on. */
function headings(view: OverviewView): SafeHtml[] {
  const { query, history } = view;
  return COLUMNS.map(
    ([key, label, num]) =>
      html`${headerCell(query, key, label, num)}${key === "lag" && history ? sparklineHeading(history) : ""}`,
  );
}

function lastSweepCell(row: OverviewRow, isLeader: boolean, nowMs: number): SafeHtml {
  const sweep = row.lastSweep;
  if (sweep === undefined) {
    return html`<td
      class="num muted"
      title="${isLeader ? "no sweep yet" : "this replica is standby"}"
    >
      ${UNKNOWN}
    </td>`;
  }
  const ago = formatDuration(nowMs - sweep.atMs);
  const what = sweep.error === undefined ? `${sweep.claimed} claimed` : `failed: ${sweep.error}`;
  return html`<td class="num" title="${formatTime(sweep.atMs)}: ${what}">
    ${ago} ago${sweep.error === undefined ? "" : " ✗"}
  </td>`;
}

function row(view: OverviewView, item: OverviewRow, nowMs: number): SafeHtml {
  const { report } = item;
  const s = report.sample;
  return html`<tr>
    <td>${statusBadge(report.status)}</td>
    <td class="name"><a href="${groupHref(report.stream, report.group)}">${report.stream}</a></td>
    <td class="name"><a href="${groupHref(report.stream, report.group)}">${report.group}</a></td>
    <td>${report.reason}</td>
    <td class="num">${formatCount(s.lag)}</td>
    ${view.history && sparklineCell(view.history, report.stream, report.group, view.report.generatedAt)}
    <td class="num">${formatDuration(item.lagAgeMs)}</td>
    <td class="num">${formatCount(s.pending)}</td>
    <td class="num">${formatDuration(oldestPendingIdle(s))}</td>
    <td class="num">${formatCount(s.due)}</td>
    <td class="num">${formatCount(s.deadLetters)}</td>
    <td class="num">${formatCount(s.retryLane)}</td>
    <td class="num">${formatCount(s.retryLaneLag)}</td>
    <td class="num">${formatCount(s.retryLanePending)}</td>
    ${lastSweepCell(item, view.report.leader.isLeader, nowMs)}
  </tr>`;
}

function filterForm(query: OverviewQuery): SafeHtml {
  const options = GROUP_STATUSES.map(
    (status) =>
      html`<option value="${status}" ${query.status === status ? html` selected` : ""}>
        ${status}
      </option>`,
  );
  const keep = overviewParams(query, { text: "", status: undefined, page: 1 });
  const hidden = Object.entries(keep)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`);
  return html`<form class="filter" method="get" action="/ui">
    <label
      >filter <input type="search" name="q" value="${query.text}" placeholder="stream or group"
    /></label>
    <label
      >status
      <select name="status">
        <option value="">any</option>
        ${options}
      </select></label
    >
    ${hidden}<button type="submit">apply</button>
    ${query.text !== "" || query.status !== undefined ? html`<a href="${uiHref("/ui", overviewParams(query, { text: "", status: undefined, page: 1 }))}">clear</a>` : ""}
  </form>`;
}

function pager(query: OverviewQuery, page: number, pages: number): SafeHtml {
  if (pages <= 1) return html``;
  const link = (to: number, label: string) =>
    to < 1 || to > pages || to === page
      ? html`<span class="muted">${label}</span>`
      : html`<a href="${uiHref("/ui", overviewParams(query, { page: to }))}">${label}</a>`;
  return html`<nav class="pager">
    ${link(1, "« first")}${link(page - 1, "‹ previous")}<span>page ${page} of ${pages}</span
    >${link(page + 1, "next ›")}${link(pages, "last »")}
  </nav>`;
}

/** GET /ui: every group's verdict and latest sample, filtered, sorted and paged by the query. */
export function renderOverview(view: OverviewView): string {
  const { report, query } = view;
  const page = overviewPage(report, view.sweeps, query);
  const nowMs = Date.now();
  const summary = GROUP_STATUSES.filter((status) => (page.counts.get(status) ?? 0) > 0).map(
    (status) =>
      html` <a
        class="tag s-${status}"
        href="${uiHref("/ui", overviewParams(query, { status, page: 1 }))}"
        >${status} ${page.counts.get(status)}</a
      >`,
  );
  const role = report.leader.isLeader
    ? html`this replica is the leader`
    : html`this replica is standby: last sweeps are the leader's to show`;
  const outage =
    report.redis === "unreachable"
      ? html`<p class="status s-ERROR">
          Redis is unreachable: every verdict below is as of the last sample that succeeded.
        </p>`
      : "";
  const body = html`<h1>Consumer groups</h1>
    ${outage}
    <p class="muted">
      ${page.total} groups${summary} · sampled ${formatTime(report.generatedAt)} · ${role}
    </p>
    ${filterForm(query)}
    <p class="muted">
      ${page.matching === page.total ? "" : `${page.matching} match · `}showing
      ${page.rows.length === 0 ? 0 : (page.page - 1) * query.per + 1}-${(page.page - 1) * query.per + page.rows.length}
    </p>
    <div class="scroll">
      <table>
        <thead>
          <tr>
            ${headings(view)}
          </tr>
        </thead>
        <tbody>
          ${page.rows.map((item) => row(view, item, nowMs))}
        </tbody>
      </table>
    </div>
    ${page.rows.length === 0 ? html`<p>No group ${page.total === 0 ? "sampled yet" : "matches"}.</p>` : ""}
    ${pager(query, page.page, page.pages)}
    <p class="note">
      Lag age: how long ago the entry consumers got last was added (the timestamp of the group's
      last-delivered id), shown while lag &gt; 0. Oldest pending: idle time of the oldest pending
      entry. Due: pending entries the next sweep would claim.
    </p>`;
  return renderPage({
    title: "groups",
    body,
    ...(query.paused ? {} : { refreshSeconds: view.refreshSeconds }),
    tools: refreshTools(
      query.paused,
      uiHref("/ui", overviewParams(query, { paused: !query.paused })),
    ),
  });
}
