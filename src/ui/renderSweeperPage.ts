import type { StatusReport } from "../core/groupStatus.js";
import { formatDuration, formatTime, UNKNOWN } from "./format.js";
import { html, type SafeHtml } from "./html.js";
import { dataTable, refreshTools, type Column } from "./pieces.js";
import type { LeaseState } from "../reads/readLeaseState.js";
import { renderPage } from "./renderPage.js";
import { RECENT_SWEEPS, type SweepRecord } from "./SweepLog.js";
import { groupHref, uiHref } from "./urls.js";

export interface SweeperView {
  report: StatusReport;
  lease: LeaseState;
  leaseKey: string;
  recent: SweepRecord[];
  /** `worked=1`: `recent` holds only the sweeps that did work or failed. */
  workedOnly?: boolean;
  paused: boolean;
  refreshSeconds: number;
}

function leaseFacts(view: SweeperView): SafeHtml {
  const { lease, report } = view;
  const holder =
    lease.status === "free"
      ? "nobody (the lease is free)"
      : lease.status === "unreadable"
        ? `could not be read: ${lease.error}`
        : lease.status === "unknown"
          ? "held, by a holder whose record does not match"
          : `${lease.host} pid ${lease.pid}, since ${formatTime(lease.acquiredAtMs)}`;
  const token = lease.status === "held" ? String(lease.fencingToken) : UNKNOWN;
  const role = report.leader.isLeader
    ? `leader (fencing token ${report.leader.fencingToken ?? UNKNOWN})`
    : "standby: sweeps run on the leader";
  return html`<dl class="facts">
    <dt>lease key</dt>
    <dd><code>${view.leaseKey}</code></dd>
    <dt>held by</dt>
    <dd>${holder}</dd>
    <dt>fencing token</dt>
    <dd>${token}</dd>
    <dt>this replica</dt>
    <dd>${report.leader.instance}: ${role}</dd>
  </dl>`;
}

function serverFacts(report: StatusReport): SafeHtml {
  const { server } = report;
  const capabilities = Object.entries(server.capabilities).map(
    ([name, present]) => html`<li>${name}: ${present ? "yes" : "no"}</li>`,
  );
  return html`<dl class="facts">
    <dt>server</dt>
    <dd>${server.product ?? UNKNOWN} ${server.version ?? ""} (${server.mode})</dd>
    <dt>capabilities</dt>
    <dd>
      ${
        capabilities.length === 0
          ? "not detected yet"
          : html`<ul>
              ${capabilities}
            </ul>`
      }
    </dd>
    <dt>status sampling</dt>
    <dd>
      every ${formatDuration(report.sampling.intervalMs)}, verdicts over ${report.sampling.window}
      samples
    </dd>
  </dl>`;
}

function sweepsTable(view: SweeperView): SafeHtml {
  if (view.recent.length === 0) {
    return html`<p class="muted">
      ${view.report.leader.isLeader ? "No sweep finished yet." : "None: this replica is standby, the leader sweeps."}
    </p>`;
  }
  const rows = view.recent.map(
    (sweep) =>
      html`<tr>
        <td class="num">${formatTime(sweep.atMs)}</td>
        <td class="name">
          <a href="${groupHref(sweep.stream, sweep.group)}">${sweep.stream} › ${sweep.group}</a>
        </td>
        <td class="num">${sweep.claimed}</td>
        <td class="num">${sweep.requeued}</td>
        <td class="num">${sweep.reassigned}</td>
        <td class="num">${sweep.deadLettered}</td>
        <td class="num">${sweep.ghosts}</td>
        <td class="num">${formatDuration(sweep.durationMs)}</td>
        <td>
          ${sweep.error === undefined ? (sweep.complete ? "complete" : "budget reached") : html`<span class="status s-ERROR">${sweep.error}</span>`}
        </td>
      </tr>`,
  );
  const numeric = (label: string): Column => ({ label, numeric: true });
  const columns = [
    numeric("ended"),
    { label: "group" },
    ...["claimed", "requeued", "reassigned", "dead-lettered", "ghosts", "took"].map(numeric),
    { label: "outcome" },
  ];
  return dataTable(columns, rows);
}

/** GET /ui/sweeper: the lease, this replica's role, the last sweeps, the server. */
export function renderSweeperPage(view: SweeperView): string {
  const body = html`<h1>Sweeper</h1>
    <h2>Lease</h2>
    ${leaseFacts(view)}
    <h2>
      Last sweeps${view.workedOnly === true ? " that did work" : ""}
      <span class="muted">(newest first, at most ${RECENT_SWEEPS})</span>
    </h2>
    <p>
      ${view.workedOnly === true ? html`<a href="${uiHref("/ui/sweeper", { pause: view.paused ? "1" : undefined })}">show every sweep</a>` : html`<a href="${uiHref("/ui/sweeper", { worked: "1", pause: view.paused ? "1" : undefined })}">only the sweeps that did work</a>`}
    </p>
    ${sweepsTable(view)}
    <h2>Redis</h2>
    ${serverFacts(view.report)}`;
  return renderPage({
    title: "sweeper",
    body,
    ...(view.paused ? {} : { refreshSeconds: view.refreshSeconds }),
    tools: refreshTools(
      view.paused,
      uiHref("/ui/sweeper", {
        worked: view.workedOnly === true ? "1" : undefined,
        pause: view.paused ? undefined : "1",
      }),
    ),
  });
}
