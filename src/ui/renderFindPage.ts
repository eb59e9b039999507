import type { ResolvedGroup } from "../core/resolveGroup.js";
import { FIND_SCANNED, type FoundEntry } from "../reads/findEntry.js";
import { formatDuration, formatTime, UNKNOWN } from "./format.js";
import { html, type SafeHtml } from "./html.js";
import type { Section } from "./readGroupDetail.js";
import { renderPage } from "./renderPage.js";
import { groupHref } from "./urls.js";

/** The group page's find form: a GET, so the answer is a page of its own that can be linked. */
export function findForm(group: ResolvedGroup, id = ""): SafeHtml {
  return html`<form class="filter" method="get" action="/ui/find">
    <input type="hidden" name="stream" value="${group.stream}" />
    <input type="hidden" name="group" value="${group.group}" />
    <label
      >find an id (pending, dead letter, retry lane)
      <input name="id" size="22" required value="${id}" placeholder="1700000000000-0"
    /></label>
    <button type="submit">find</button>
  </form>`;
}

function hits(id: string, found: FoundEntry): SafeHtml {
  const pending = found.pending.map(
    (hit) =>
      html`<li>
        pending for ${hit.consumer} in <code>${hit.stream}</code>: idle
        ${formatDuration(hit.idleMs)}, ${hit.deliveries} deliveries
      </li>`,
  );
  const dead = found.deadLetters.map((letter) => {
    const m = letter.metadata;
    return html`<li>
      dead letter ${letter.id} (x-original-id ${m["x-original-id"] ?? UNKNOWN}):
      ${m["x-dead-letter-reason"] ?? UNKNOWN}, dead-lettered
      ${formatTime(Number(m["x-dead-lettered-at"]))}
    </li>`;
  });
  if (pending.length + dead.length === 0) {
    return html`<p class="outcome">
      ${id} was not found: not pending for the group, nor one of its dead letters.
    </p>`;
  }
  return html`<ul>
    ${pending}${dead}
  </ul>`;
}

/** GET /ui/find?stream=S&group=G&id=ID: where the id is, or that it was not found, and what was searched. */
export function renderFindPage(
  group: ResolvedGroup,
  id: string,
  found: Section<FoundEntry>,
): string {
  const searched =
    found.ok && !found.value.indexed
      ? "The group's dead-letter index is not complete: dead letters were looked up by their own id only, within the page's byte budget."
      : `Searched: the group's pending entries and its retry lane's (by id), its dead letters by id and, among its newest ${FIND_SCANNED}, by x-original-id (envelopes only, no body read).`;
  return renderPage({
    title: `find ${id}`,
    body: html`<p class="muted">
        <a href="${groupHref(group.stream, group.group)}">${group.stream} › ${group.group}</a> ›
      </p>
      <h1>Find <code>${id}</code></h1>
      ${findForm(group, id)}
      ${found.ok ? hits(id, found.value) : html`<p class="note">Could not be read: ${found.error}</p>`}
      <p class="note">${searched}</p>`,
  });
}

/** A find whose id is not a stream id: says so (400). */
export function renderBadFind(group: ResolvedGroup, id: string): string {
  return renderPage({
    title: "find",
    body: html`<h1>Find</h1>
      <p class="outcome">${id} is not a stream id (such as 1700000000000-0).</p>
      ${findForm(group)}`,
  });
}
