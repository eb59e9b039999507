import type { GroupStatus } from "../core/groupStatus.js";
import { html, type SafeHtml } from "./html.js";

/** A status in colour and in words (colour alone would not do for everyone). */
export function statusBadge(status: GroupStatus): SafeHtml {
  return html`<span class="status s-${status}">${status}</span>`;
}

/** The header's pause/resume link: the same page with `pause` toggled. */
export function refreshTools(paused: boolean, toggleHref: string): SafeHtml {
  return html`<a class="refresh" href="${toggleHref}"
    >${paused ? "resume refresh" : "pause refresh"}</a
  >`;
}

/** A column heading; numeric columns are right-aligned, heading and cells alike. */
export interface Column {
  label: string;
  numeric?: boolean;
}

/**
 * A table in a box that scrolls sideways on a narrow screen (the page itself never does): the
 * one shape of every list of the console but the overview, whose headings are sort links.
 */
export function dataTable(columns: readonly Column[], rows: readonly SafeHtml[]): SafeHtml {
  const headings = columns.map((column) =>
    column.numeric === true
      ? html`<th class="num">${column.label}</th>`
      : html`<th>${column.label}</th>`,
  );
  return html`<div class="scroll">
    <table>
      <thead>
        <tr>
          ${headings}
        </tr>
      </thead>
      <tbody>
        ${rows}
      </tbody>
    </table>
  </div>`;
}
