import type { GroupStatusReport } from "../core/groupStatus.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { AdvisoryEventRecord } from "../events/advisoryEventRecord.js";
import { cliLines } from "./cliLines.js";
import {
  formatCount,
  formatDuration,
  formatTime,
  lagAgeMs,
  oldestPendingIdle,
  UNKNOWN,
} from "./format.js";
import { html, type SafeHtml } from "./html.js";
import { dataTable, refreshTools, statusBadge } from "./pieces.js";
import type { ConsumerRow } from "../reads/readConsumers.js";
import type { PendingRow } from "../reads/readPendingPage.js";
import type { GroupDetail, Section } from "./readGroupDetail.js";
import { GROUP_PAGE_LIMITS } from "./readGroupDetail.js";
import { renderPage } from "./renderPage.js";
import { deadLettersWithForms } from "./renderDeadLetters.js";
import { tasksSection } from "./renderTasks.js";
import { findForm } from "./renderFindPage.js";
import type { RedriveTask } from "../core/redriveTask.js";
import type { SweepRecord } from "./SweepLog.js";
import { uiHref } from "./urls.js";
import { reapForm, type FormContext } from "./actionForms.js";
import { historySection, type GroupHistoryPart } from "./renderHistoryCharts.js";

export interface GroupView {
  group: ResolvedGroup;
  status: GroupStatusReport | undefined;
  /** The status board's sampling time (Redis clock), for ages. */
  nowMs: number;
  detail: GroupDetail;
  lastSweep: SweepRecord | undefined;
  showBodies: boolean;
  paused: boolean;
  refreshSeconds: number;
  /** Set for an operator when http.ui.actions is on: the page shows the action forms. */
  forms?: FormContext;
  /** The dead letters' cursor: the page shows those older than this id (`before=`). */
  before?: string;
  /** The group's redrive tasks (src/ui/readGroupTasks.ts); undefined: not shown. */
  tasks?: Section<RedriveTask[]>;
  /** The group's last minutes, when the history is on (README "Web console"). */
  history?: GroupHistoryPart;
}

function failed(error: string): SafeHtml {
  return html`<p class="note">Could not be read: ${error}</p>`;
}

function summary(view: GroupView): SafeHtml {
  const { status, group } = view;
  if (status === undefined) return html`<p class="muted">No sample of this group yet.</p>`;
  const s = status.sample;
  return html`<p>
      ${statusBadge(status.status)} since ${formatTime(status.since)}: ${status.reason}
    </p>
    <dl class="facts">
      <dt>lag</dt>
      <dd>
        ${formatCount(s.lag)} (age
        ${formatDuration(lagAgeMs(s.lag, s.lastDeliveredId, view.nowMs))})
      </dd>
      <dt>pending</dt>
      <dd>
        ${formatCount(s.pending)}, oldest idle ${formatDuration(oldestPendingIdle(s))}, due
        ${formatCount(s.due)}
      </dd>
      <dt>dead letters</dt>
      <dd>${formatCount(s.deadLetters)} of this group in ${group.deadLetterStream}</dd>
      <dt>retry lane</dt>
      <dd>
        ${group.retryLaneStream === undefined ? "none" : html`${formatCount(s.retryLane)} in ${group.retryLaneStream}: lag ${formatCount(s.retryLaneLag)}, ${formatCount(s.retryLanePending)} pending`}
      </dd>
      <dt>action</dt>
      <dd>
        ${group.action}, minIdle ${formatDuration(group.minIdleMs)}, maxDeliveries
        ${group.maxDeliveries}
      </dd>
      <dt>last sweep</dt>
      <dd>
        ${view.lastSweep === undefined ? "- (none seen by this replica)" : `${formatTime(view.lastSweep.atMs)}: ${view.lastSweep.error ?? `${view.lastSweep.claimed} claimed, ${view.lastSweep.deadLettered} dead-lettered, ${view.lastSweep.ghosts} ghosts`}`}
      </dd>
    </dl>`;
}

function consumersTable(section: Section<ConsumerRow[]>, reapIdleMs: number): SafeHtml {
  if (!section.ok) return failed(section.error);
  if (section.value.length === 0) return html`<p class="muted">No consumers.</p>`;
  const rows = section.value.map((consumer) => {
    // Reaping's own rule (reapConsumers.lua): `inactive` where the server reports one (7.2+),
    // else `idle`; inactive -1 (never read anything) is judged by idle, so one that polls stays.
    const inactive =
      consumer.inactiveMs !== undefined && consumer.inactiveMs >= 0
        ? consumer.inactiveMs
        : consumer.idleMs;
    const reapable = reapIdleMs > 0 && consumer.pending === 0 && inactive >= reapIdleMs;
    return html`<tr>
      <td class="name">${consumer.name}</td>
      <td class="num">${consumer.pending}</td>
      <td class="num">${formatDuration(consumer.idleMs)}</td>
      <td class="num">
        ${
          consumer.inactiveMs === undefined
            ? UNKNOWN
            : consumer.inactiveMs < 0
              ? "never read"
              : formatDuration(consumer.inactiveMs)
        }
      </td>
      <td>${reapIdleMs <= 0 ? UNKNOWN : reapable ? "yes" : "no"}</td>
    </tr>`;
  });
  const columns = [
    { label: "consumer" },
    { label: "pending", numeric: true },
    { label: "idle", numeric: true },
    { label: "inactive", numeric: true },
    { label: "reapable" },
  ];
  return html`${dataTable(columns, rows)}
    <p class="note">
      Idle: since the consumer's last read attempt. Inactive: since its last successful read (Redis
      7.2+). Reapable: owns nothing and inactive past reapConsumersIdleMs
      (${reapIdleMs > 0 ? formatDuration(reapIdleMs) : "not set"}).
    </p>`;
}

function pendingTable(section: Section<PendingRow[]>): SafeHtml {
  if (!section.ok) return failed(section.error);
  if (section.value.length === 0) return html`<p class="muted">Nothing pending.</p>`;
  const rows = section.value.map(
    (entry) =>
      html`<tr>
        <td><code>${entry.id}</code></td>
        <td class="name">${entry.consumer}</td>
        <td class="num">${formatDuration(entry.idleMs)}</td>
        <td class="num">${entry.deliveries}</td>
        <td>
          ${entry.ghost === undefined ? html`<span class="muted">not checked</span>` : entry.ghost ? html`<span class="status s-ERROR">ghost</span>` : "no"}
        </td>
      </tr>`,
  );
  const columns = [
    { label: "id" },
    { label: "owner" },
    { label: "idle", numeric: true },
    { label: "deliveries", numeric: true },
    { label: "ghost" },
  ];
  return html`${dataTable(columns, rows)}
    <p class="note">
      The oldest ${GROUP_PAGE_LIMITS.pending} pending entries. A ghost is pending but its entry is
      gone from the stream (deleted or trimmed). Every id below the stream's first entry is found;
      above it an entry is looked up whole, so only within the page's byte budget: the rest are not
      checked (the sweep clears the ghosts it meets).
    </p>`;
}

function eventsList(section: Section<AdvisoryEventRecord[]>): SafeHtml {
  if (!section.ok) return failed(section.error);
  if (section.value.length === 0)
    return html`<p class="muted">No recent events for this group.</p>`;
  const rows = section.value.map(
    (event) =>
      html`<tr>
        <td class="num">${formatTime(event.at)}</td>
        <td>${event.type}</td>
        <td class="num">${event.count}</td>
        <td class="name">${event.by}</td>
        <td class="name"><code>${JSON.stringify(event.detail)}</code></td>
      </tr>`,
  );
  const columns = [
    { label: "at", numeric: true },
    { label: "type" },
    { label: "count", numeric: true },
    { label: "by" },
    { label: "detail" },
  ];
  return dataTable(columns, rows);
}

/**
 * GET /ui/group?stream=S&group=G: one group in depth, every list a bounded page. With forms (an
 * operator, actions on) the page does not refresh itself: a reload would drop what is typed or
 * ticked.
 */
export function renderGroupPage(view: GroupView): string {
  const { group, forms } = view;
  const self = { stream: group.stream, group: group.group };
  const content = html`<p class="muted"><a href="/ui">groups</a> ›</p>
    <h1>${group.stream} › ${group.group}</h1>
    ${summary(view)} ${historySection(view.history)} ${findForm(group)}
    <h2>Consumers</h2>
    ${consumersTable(view.detail.consumers, group.reapConsumersIdleMs ?? 0)}
    ${forms === undefined ? "" : reapForm(group, forms)}
    <h2>Oldest pending entries</h2>
    ${pendingTable(view.detail.pending)}
    <h2>Dead letters</h2>
    ${view.detail.deadLetters.ok ? deadLettersWithForms(view.detail.deadLetters.value, view) : failed(view.detail.deadLetters.error)}
    ${
      view.tasks === undefined
        ? ""
        : html`<h2>Redrive tasks</h2>
            ${tasksSection(view.tasks, group, forms)}`
    }
    <h2>Recent events</h2>
    ${eventsList(view.detail.events)}
    <h2>Next steps</h2>
    <p class="note">
      Operator commands for this group (add <code>--config FILE</code>);
      ${forms === undefined ? "the console itself changes nothing." : "the forms above run the same code."}
    </p>
    <pre>${cliLines(group).join("\n")}</pre>`;
  const refreshing = forms === undefined && !view.paused;
  return renderPage({
    title: `${group.stream} › ${group.group}`,
    body: content,
    ...(refreshing ? { refreshSeconds: view.refreshSeconds } : {}),
    tools:
      forms === undefined
        ? refreshTools(
            view.paused,
            uiHref("/ui/group", { ...self, pause: view.paused ? undefined : "1" }),
          )
        : html`<span class="muted">not refreshing (this page holds forms)</span>`,
  });
}

/** The 404 of an unknown group: says what was asked for, links back. */
export function renderUnknownGroup(stream: string, group: string): string {
  return renderPage({
    title: "unknown group",
    body: html`<h1>Unknown group</h1>
      <p>
        No configured or discovered group <code>${group}</code> on stream <code>${stream}</code>.
      </p>
      <p><a href="/ui">All groups</a></p>`,
  });
}
