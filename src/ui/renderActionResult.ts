import type { ResolvedGroup } from "../core/resolveGroup.js";
import { html } from "./html.js";
import { dataTable } from "./pieces.js";
import { renderPage } from "./renderPage.js";
import type { ActionOutcome, UiActionKind } from "./UiActions.js";
import { groupHref, taskHref } from "./urls.js";

/** The page a done action answers with: what it did in words and as a row; no refresh. */
export function renderActionResult(
  kind: UiActionKind,
  group: ResolvedGroup,
  outcome: ActionOutcome,
  by: string,
): string {
  const columns = Object.keys(outcome.row).map((label) => ({ label }));
  const cells = Object.values(outcome.row).map((value) => html`<td>${value}</td>`);
  const taskId = kind === "task" ? outcome.result.id : undefined;
  const follow =
    typeof taskId === "string"
      ? html`<p><a href="${taskHref(taskId)}">follow the task</a> (its page shows progress)</p>`
      : "";
  const row = html`<tr class="result">
    ${cells}
  </tr>`;
  return renderPage({
    title: `${kind} · ${group.stream} › ${group.group}`,
    body: html`<p class="muted">
        <a href="${groupHref(group.stream, group.group)}">back to the group</a>
      </p>
      <h1>${kind}: ${group.stream} › ${group.group}</h1>
      <p class="outcome">${group.id}: ${outcome.words}</p>
      ${dataTable(columns, [row])} ${follow}
      <p class="note">Recorded as a ui-action event by ${by}.</p>`,
  });
}

/** The page of an action not done: why, and the way back. */
export function renderActionRefused(
  reason: string,
  back: { stream: string; group: string } | undefined,
): string {
  const link = back === undefined ? "/ui" : groupHref(back.stream, back.group);
  return renderPage({
    title: "action refused",
    body: html`<h1>Action refused</h1>
      <p class="outcome">${reason}</p>
      <p><a href="${link}">back</a></p>`,
  });
}
