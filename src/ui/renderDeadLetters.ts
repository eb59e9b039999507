import type { RawDeadLetter } from "../reads/listDeadLetters.js";
import { formatTime, UNKNOWN } from "./format.js";
import { html, type SafeHtml } from "./html.js";
import { dataTable } from "./pieces.js";
import { GROUP_PAGE_LIMITS } from "./readGroupDetail.js";
import type { PageDeadLetters } from "../reads/readPageDeadLetters.js";
import { showBytes } from "./showBytes.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { uiHref } from "./urls.js";
import { rowControls, rowForms, selectionForms, type FormContext } from "./actionForms.js";

const BUDGET = `${GROUP_PAGE_LIMITS.bytes / (1024 * 1024)} MB`;

function body(letter: RawDeadLetter, leftOut: boolean): SafeHtml {
  if (leftOut) return html`<span class="muted">left out (byte budget spent)</span>`;
  const fields = letter.fields.map(([name, value]) => {
    const shownName = showBytes(name);
    const shown = showBytes(value);
    const more =
      shown.omitted > 0 ? html` <span class="muted">(+${shown.omitted} bytes)</span>` : "";
    return html`<dt>${shownName.text}${shownName.hex ? " (hex)" : ""}</dt>
      <dd>
        <code>${shown.text}</code>${shown.hex ? html` <span class="tag">hex</span>` : ""}${more}
      </dd>`;
  });
  return html`<dl class="facts">${fields}</dl>`;
}

/** What the section read and what it left out, in words. */
function readNote(read: PageDeadLetters, deadLetterStream: string, showBodies: boolean): string {
  const { letters, indexed, total, budgetSpent, cutShort, bodiesLeftOut } = read;
  const from = indexed
    ? `The newest ${letters.length} of the ${total ?? UNKNOWN} dead letters of this group, from its dead-letter index (envelopes only).`
    : `The dead-letter index of this group is not complete yet (the sweep builds it): its newest ${letters.length} dead letters read from ${deadLetterStream} itself${budgetSpent ? `; the page's byte budget (${BUDGET}) was spent after ${read.scanned} entries, older ones are not shown` : cutShort ? ` (looked at its newest ${GROUP_PAGE_LIMITS.deadLettersScanned} entries)` : ""}.`;
  const bodies = !showBodies
    ? "Bodies are not shown (http.ui.showBodies: false)."
    : `Bodies truncated to 200 bytes per field; binary shown as hex.${bodiesLeftOut.length > 0 ? ` The bodies of ${bodiesLeftOut.length} dead letters left out: the page reads whole entries within ${BUDGET}.` : ""}`;
  return `${from} ${bodies}`;
}

/**
 * The group's dead letters by reason. With `actions` (an operator's page) each row has a tick box
 * and its own redrive and purge buttons, posting into the forms rowForms adds.
 */
function deadLetterSection(
  section: PageDeadLetters,
  deadLetterStream: string,
  showBodies: boolean,
  actions?: FormContext & { group: ResolvedGroup },
): SafeHtml {
  const { letters } = section;
  if (letters.length === 0) {
    return html`<p class="muted">
      No dead letters of this group.
      ${section.indexed ? "" : readNote(section, deadLetterStream, false)}
    </p>`;
  }
  const leftOut = new Set(section.bodiesLeftOut);
  const byReason = new Map<string, RawDeadLetter[]>();
  for (const letter of letters) {
    const reason = letter.metadata["x-dead-letter-reason"] ?? "(no reason)";
    byReason.set(reason, [...(byReason.get(reason) ?? []), letter]);
  }
  const groups = [...byReason].map(([reason, list]) => {
    const rows = list.map((letter) => {
      const m = letter.metadata;
      const controls = actions === undefined ? undefined : rowControls(letter.id);
      return html`<tr>
        ${controls?.tick}
        <td><code>${letter.id}</code></td>
        <td><code>${m["x-original-id"] ?? UNKNOWN}</code></td>
        <td class="num">${m["x-delivery-count"] ?? UNKNOWN}</td>
        <td class="name">${m["x-last-consumer"] ?? UNKNOWN}</td>
        <td class="num">${formatTime(Number(m["x-dead-lettered-at"]))}</td>
        ${showBodies ? html`<td>${body(letter, leftOut.has(letter.id))}</td>` : ""}
        ${controls?.buttons}
      </tr>`;
    });
    const columns = [
      ...(actions === undefined ? [] : [{ label: "select" }]),
      { label: "id" },
      { label: "x-original-id" },
      { label: "x-delivery-count", numeric: true },
      { label: "x-last-consumer" },
      { label: "x-dead-lettered-at", numeric: true },
      ...(showBodies ? [{ label: "body" }] : []),
      ...(actions === undefined ? [] : [{ label: "action" }]),
    ];
    return html`<h3>${reason} <span class="muted">(${list.length})</span></h3>
      ${dataTable(columns, rows)}`;
  });
  return html`${groups}
    <p class="note">${readNote(section, deadLetterStream, showBodies)}</p>
    ${actions === undefined ? "" : rowForms(actions.group, actions)}`;
}

/** The section as the group page shows it: with forms (an operator's page), the selection forms. */
export function deadLettersWithForms(
  section: PageDeadLetters,
  view: { group: ResolvedGroup; showBodies: boolean; forms?: FormContext; before?: string },
): SafeHtml {
  const { group, forms } = view;
  const actions = forms && { ...forms, group };
  const list = deadLetterSection(section, group.deadLetterStream, view.showBodies, actions);
  const pages = paging(section, group, view.before);
  if (forms === undefined) return html`${list}${pages}`;
  return html`${list}${pages}${selectionForms(group, forms)}`;
}

/**
 * Links to the older dead letters (the cursor is the last id shown: a stable page, whatever is
 * added or removed meanwhile) and back to the newest.
 */
function paging(section: PageDeadLetters, group: ResolvedGroup, before: string | undefined) {
  const last = section.letters.at(-1)?.id;
  const full = section.letters.length >= GROUP_PAGE_LIMITS.deadLetters;
  const self = { stream: group.stream, group: group.group };
  if (before === undefined && !full) return html``;
  return html`<p class="paging">
    ${before === undefined ? "" : html`<a href="${uiHref("/ui/group", self)}">newest dead letters</a>`}
    ${full && last !== undefined ? html`<a href="${uiHref("/ui/group", { ...self, before: last })}">older dead letters →</a>` : ""}
  </p>`;
}
