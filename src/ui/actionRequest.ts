import type { IncomingMessage } from "node:http";
import { parseDuration } from "../config/parseDuration.js";
import { DEAD_LETTER_REASONS, type DeadLetterReason } from "../core/copyMetadata.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { DeadLetterSelection } from "./UiActions.js";

/** A form's body is a few fields and at most a page of ids: anything larger is refused. */
const MAX_FORM_BYTES = 64 * 1024;
/** Ids one submission may name (a page shows 50). */
const MAX_IDS = 1000;

/** The form's fields, or undefined when the body is not a form or is too large. */
export async function readForm(request: IncomingMessage): Promise<URLSearchParams | undefined> {
  const type = request.headers["content-type"] ?? "";
  if (!/^application\/x-www-form-urlencoded\b/iu.test(type)) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) return undefined;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

/** A selection, or why the form does not make one (`confirmation` when the name was wrong). */
export type SelectionRead =
  | { ok: true; selection: DeadLetterSelection }
  | { ok: false; problem: string; confirmation?: true };

/**
 * Which dead letters the form selects: `scope` ids (the `id` fields), filter (a reason, an age:
 * at least one, so a filter never widens to everything) or all, which needs the group's name typed
 * back in `confirm`, as `dlq purge --all` asks for it on a terminal.
 */
export function readSelection(form: URLSearchParams, group: ResolvedGroup): SelectionRead {
  switch (form.get("scope")) {
    case "ids": {
      const ids = form.getAll("id");
      if (ids.length === 0) return { ok: false, problem: "no dead letter was ticked" };
      if (ids.length > MAX_IDS) return { ok: false, problem: `more than ${MAX_IDS} ids` };
      const bad = ids.find((id) => !/^\d+-\d+$/u.test(id));
      if (bad !== undefined) return { ok: false, problem: `not a dead-letter id: ${bad}` };
      return { ok: true, selection: { scope: "ids", ids } };
    }
    case "filter":
      return readFilter(form);
    case "all":
      if (form.get("confirm") !== group.group) {
        const problem = `"all" needs the group's name typed back exactly (${group.group})`;
        return { ok: false, problem, confirmation: true };
      }
      return { ok: true, selection: { scope: "all" } };
    default:
      return { ok: false, problem: "the form names no selection (scope)" };
  }
}

function readFilter(form: URLSearchParams): SelectionRead {
  const reasonText = form.get("reason") ?? "";
  const ageText = (form.get("olderThan") ?? "").trim();
  if (reasonText !== "" && !(DEAD_LETTER_REASONS as readonly string[]).includes(reasonText)) {
    return { ok: false, problem: `not a dead-letter reason: ${reasonText}` };
  }
  const olderThanMs = ageText === "" ? undefined : parseDuration(ageText);
  if (ageText !== "" && olderThanMs === undefined) {
    return { ok: false, problem: `"older than" expects a duration such as 30m, 2h or 7d` };
  }
  if (reasonText === "" && olderThanMs === undefined) {
    const problem = `choose a reason or an age (every dead letter is "all", which asks for the group's name)`;
    return { ok: false, problem };
  }
  const reason = reasonText === "" ? undefined : (reasonText as DeadLetterReason);
  return {
    ok: true,
    selection: {
      scope: "filter",
      ...(reason !== undefined && { reason }),
      ...(olderThanMs !== undefined && { olderThanMs }),
    },
  };
}

/**
 * reap's `idle`: a duration above 0 (0 would reap a consumer that registered and has not read
 * yet: the CLI takes it from an operator who typed it, the form refuses it).
 */
export function readIdle(form: URLSearchParams): number | undefined {
  const idleMs = parseDuration((form.get("idle") ?? "").trim());
  return idleMs === undefined || idleMs <= 0 ? undefined : idleMs;
}

/** cancel's `task`: a task id as newRedriveTaskId makes them (`rt-<base 36>-<hex>`). */
export function readTaskId(form: URLSearchParams): string | undefined {
  const id = (form.get("task") ?? "").trim();
  return /^rt-[0-9a-z]+-[0-9a-f]+$/u.test(id) ? id : undefined;
}
