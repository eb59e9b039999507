import { isActiveTaskStatus, type RedriveTask } from "../core/redriveTask.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { FormContext } from "./actionForms.js";
import { formatTime, UNKNOWN } from "./format.js";
import { html, type SafeHtml } from "./html.js";
import { dataTable } from "./pieces.js";
import type { Section } from "./readGroupDetail.js";
import { renderPage } from "./renderPage.js";
import { groupHref, taskHref } from "./urls.js";

const CANCEL = "/ui/actions/cancel";

/** A task's status in words and colour: active ones warn, failures are bad. */
function taskStatus(task: RedriveTask): SafeHtml {
  const tone = task.status === "FAILED" ? "ERROR" : isActiveTaskStatus(task.status) ? "WARN" : "OK";
  return html`<span class="status s-${tone}">${task.status}</span>`;
}

/** moved of toMove, and the share done. */
function progress(task: RedriveTask): string {
  const share = task.toMove > 0 ? ` (${Math.floor((task.moved / task.toMove) * 100)}%)` : "";
  return `${task.moved} of ${task.toMove}${share}`;
}

function rate(task: RedriveTask): string {
  return task.rate > 0 ? `${task.rate}/s` : "unlimited";
}

/** A RUNNING task's cancel button (dlq cancel), a form of its own: it works without JavaScript. */
function cancelForm(task: RedriveTask, group: ResolvedGroup, forms: FormContext): SafeHtml {
  if (task.status !== "RUNNING") return html``;
  return html`<form class="inline" method="post" action="${CANCEL}">
    <input type="hidden" name="csrf" value="${forms.csrf}" />
    <input type="hidden" name="stream" value="${group.stream}" />
    <input type="hidden" name="group" value="${group.group}" />
    <input type="hidden" name="task" value="${task.id}" />
    <button type="submit" aria-label="cancel ${task.id}">cancel</button>
  </form>`;
}

/**
 * The group's redrive tasks (README "Operating", dlq tasks): status, moved / to move, rate, who
 * started it and when, its failure; with forms, a cancel button per running task.
 */
export function tasksSection(
  section: Section<RedriveTask[]>,
  group: ResolvedGroup,
  forms: FormContext | undefined,
): SafeHtml {
  if (!section.ok) return html`<p class="note">Could not be read: ${section.error}</p>`;
  if (section.value.length === 0) return html`<p class="muted">No redrive tasks of this group.</p>`;
  const rows = section.value.map(
    (task) =>
      html`<tr>
        <td>
          <a href="${taskHref(task.id)}"><code>${task.id}</code></a>
        </td>
        <td>${taskStatus(task)}</td>
        <td class="num">${progress(task)}</td>
        <td class="num">${rate(task)}</td>
        <td class="name">${task.startedBy}</td>
        <td class="num">${formatTime(task.startedAt)}</td>
        <td class="name">${task.failure === "" ? UNKNOWN : task.failure}</td>
        ${forms === undefined ? "" : html`<td>${cancelForm(task, group, forms)}</td>`}
      </tr>`,
  );
  const columns = [
    { label: "task" },
    { label: "status" },
    { label: "moved", numeric: true },
    { label: "rate", numeric: true },
    { label: "started by" },
    { label: "started at", numeric: true },
    { label: "failure" },
    ...(forms === undefined ? [] : [{ label: "action" }]),
  ];
  return dataTable(columns, rows);
}

interface TaskView {
  id: string;
  task: Section<RedriveTask | undefined>;
  /** The task's group, when configured or discovered: its cancel form needs it. */
  group: ResolvedGroup | undefined;
  forms?: FormContext;
  refreshSeconds: number;
}

function taskFacts(task: RedriveTask): SafeHtml {
  return html`<dl class="facts">
    <dt>status</dt>
    <dd>${taskStatus(task)}</dd>
    <dt>moved</dt>
    <dd>${progress(task)}</dd>
    <dt>rate</dt>
    <dd>${rate(task)}</dd>
    <dt>from</dt>
    <dd>
      <code>${task.deadLetterStream}</code>${task.reason === "" ? "" : ` (reason ${task.reason})`},
      up to <code>${task.endId}</code>
    </dd>
    <dt>to</dt>
    <dd><code>${task.target}</code></dd>
    <dt>started</dt>
    <dd>${formatTime(task.startedAt)} by ${task.startedBy}</dd>
    <dt>finished</dt>
    <dd>${formatTime(task.finishedAt)}</dd>
    <dt>held back</dt>
    <dd>${task.heldBack}</dd>
    <dt>failure</dt>
    <dd>${task.failure === "" ? UNKNOWN : task.failure}</dd>
  </dl>`;
}

/**
 * GET /ui/task?id=ID: one task. An active task's page without forms refreshes itself, so that its
 * progress shows; an operator's page holds the cancel form and, as every page with forms, does not.
 */
export function renderTaskPage(view: TaskView): string {
  const { task, group, forms } = view;
  let body: SafeHtml;
  let active = false;
  if (!task.ok) body = html`<p class="note">Could not be read: ${task.error}</p>`;
  else if (task.value === undefined) {
    body = html`<p>No redrive task <code>${view.id}</code> (finished ones expire).</p>`;
  } else {
    const found = task.value;
    active = isActiveTaskStatus(found.status);
    const back = html`<p class="muted">
      <a href="${groupHref(found.stream, found.group)}">${found.stream} › ${found.group}</a> ›
    </p>`;
    const cancel =
      forms !== undefined && group !== undefined ? cancelForm(found, group, forms) : html``;
    body = html`${back}${taskFacts(found)}${cancel}`;
  }
  const refreshing = active && forms === undefined;
  return renderPage({
    title: `redrive task ${view.id}`,
    body: html`<h1>Redrive task <code>${view.id}</code></h1>
      ${body}`,
    ...(refreshing ? { refreshSeconds: view.refreshSeconds } : {}),
  });
}
