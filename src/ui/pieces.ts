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
