import { DEAD_LETTER_REASONS } from "../core/copyMetadata.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { html, type SafeHtml } from "./html.js";

/** What a page needs to show the action forms: the caller's CSRF token. */
export interface FormContext {
  csrf: string;
}

const REDRIVE = "/ui/actions/redrive";
const PURGE = "/ui/actions/purge";
const REAP = "/ui/actions/reap";
const TASK = "/ui/actions/task";

/** The fields every action form carries: its token and the group it acts on. */
function hiddenFields(group: ResolvedGroup, forms: FormContext, scope?: string): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${forms.csrf}" />
    <input type="hidden" name="stream" value="${group.stream}" />
    <input type="hidden" name="group" value="${group.group}" />
    ${scope === undefined ? "" : html`<input type="hidden" name="scope" value="${scope}" />`}`;
}

/**
 * The two forms the dead-letter rows submit into (plain HTML: a row's button or tick box names
 * its form with `form=`): `dl-one` takes the id of the button pressed, `dl-selected` every id
 * ticked. Both POST; neither needs JavaScript.
 */
export function rowForms(group: ResolvedGroup, forms: FormContext): SafeHtml {
  return html`<form id="dl-one" method="post" action="${REDRIVE}">
      ${hiddenFields(group, forms, "ids")}
    </form>
    <form id="dl-selected" class="filter" method="post" action="${REDRIVE}">
      ${hiddenFields(group, forms, "ids")}
      <span>Ticked dead letters:</span>
      <button type="submit" formaction="${REDRIVE}">redrive selected</button>
      <button type="submit" formaction="${PURGE}">purge selected</button>
    </form>`;
}

/** A dead letter's own cells: its tick box for `dl-selected`, its buttons for `dl-one`. */
export function rowControls(id: string): { tick: SafeHtml; buttons: SafeHtml } {
  return {
    tick: html`<td>
      <input type="checkbox" name="id" value="${id}" form="dl-selected" aria-label="select ${id}" />
    </td>`,
    buttons: html`<td class="actions">
      <button type="submit" form="dl-one" formaction="${REDRIVE}" name="id" value="${id}">
        redrive</button
      ><button type="submit" form="dl-one" formaction="${PURGE}" name="id" value="${id}">
        purge
      </button>
    </td>`,
  };
}

/**
 * By reason and age, and all, which asks the name: redrive now, as a task the leader runs (dlq
 * redrive --async), or purge.
 */
export function selectionForms(group: ResolvedGroup, forms: FormContext): SafeHtml {
  const reasons = DEAD_LETTER_REASONS.map((r) => html`<option value="${r}">${r}</option>`);
  return html`<form class="filter" method="post" action="${REDRIVE}">
      ${hiddenFields(group, forms, "filter")}
      <label
        >reason
        <select name="reason">
          <option value="">any</option>
          ${reasons}
        </select></label
      >
      <label>older than <input name="olderThan" size="6" placeholder="e.g. 1d" /></label>
      <button type="submit" formaction="${REDRIVE}">redrive</button>
      <button type="submit" formaction="${TASK}">redrive as a task</button>
      <button type="submit" formaction="${PURGE}">purge</button>
    </form>
    <form class="filter" method="post" action="${REDRIVE}">
      ${hiddenFields(group, forms, "all")}
      <label
        >every dead letter of the group: type its name
        <input name="confirm" required autocomplete="off" placeholder="${group.group}"
      /></label>
      <button type="submit" formaction="${REDRIVE}">redrive all</button>
      <button type="submit" formaction="${TASK}">redrive all as a task</button>
      <button type="submit" formaction="${PURGE}">purge all</button>
    </form>
    <p class="note">
      A redrive moves at most 5,000 dead letters per submission, 1,000 a second (as dlq redrive by
      default), by reason, by age or by id; a task moves the whole selection at 1,000 a second, run
      by the leader (dlq redrive --async), and is listed below with its progress. Every action is
      recorded as a ui-action event naming you.
    </p>`;
}

/** A duration as the form takes it back (parseDuration): the largest whole unit. */
function durationField(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, "d"],
    [3_600_000, "h"],
    [60_000, "m"],
    [1000, "s"],
  ];
  for (const [size, unit] of units) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** Deletes the consumers that own nothing and were inactive this long (consumers reap). */
export function reapForm(group: ResolvedGroup, forms: FormContext): SafeHtml {
  const idle = group.reapConsumersIdleMs ?? 0;
  return html`<form class="filter" method="post" action="${REAP}">
    ${hiddenFields(group, forms)}
    <label
      >idle at least
      <input name="idle" size="6" required value="${idle > 0 ? durationField(idle) : "1h"}"
    /></label>
    <button type="submit">reap idle consumers</button>
  </form>`;
}
