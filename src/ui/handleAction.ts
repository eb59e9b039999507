import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { GroupSource } from "../core/GroupSet.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { withTimeout } from "../core/withTimeout.js";
import { appendEvent } from "../events/EventWriter.js";
import type { Caller } from "../http/HttpRoute.js";
import { send } from "../http/send.js";
import type { RedisClient } from "../redis/RedisClient.js";
import type { ActionRefusals, RefusalReason } from "./ActionRefusals.js";
import { readForm } from "./actionRequest.js";
import type { CsrfTokens } from "./CsrfTokens.js";
import { renderActionRefused, renderActionResult } from "./renderActionResult.js";
import { UI_HEADERS } from "./renderPage.js";
import { runActionKind, type KindRun } from "./runActionKind.js";
import { sameOrigin } from "./sameOrigin.js";
import type { ActionOutcome, UiActionKind, UiActionRunner } from "./UiActions.js";

/** What the actions need beside the console's own parts. */
export interface ActionParts {
  runner: UiActionRunner;
  csrf: CsrfTokens;
  refusals: ActionRefusals;
  groups: GroupSource;
  /** For the audit event (events.stream; "" writes none). */
  redis: RedisClient;
  events: { stream: string; maxLen: number };
  logger: Logger;
}

const HTML = "text/html; charset=utf-8";
/** An audit write that takes longer is given up (and logged): the action is done already. */
const AUDIT_TIMEOUT_MS = 2000;

function answer(response: ServerResponse, status: number, page: string): void {
  send(response, status, page, HTML, UI_HEADERS);
}

/** The checks in order, each before anything is read or done: role, origin, token, group. */
async function admitAction(
  parts: ActionParts,
  request: IncomingMessage,
  response: ServerResponse,
  caller: Caller | undefined,
): Promise<{ form: URLSearchParams; group: ResolvedGroup; who: Caller } | undefined> {
  const refuse = (status: number, reason: RefusalReason | undefined, words: string): undefined => {
    if (reason !== undefined) {
      parts.refusals.note(reason, request.socket.remoteAddress, { by: caller?.name });
    }
    answer(response, status, renderActionRefused(words, undefined));
    return undefined;
  };
  if (caller?.role !== "operator") {
    return refuse(403, "role", "Only an operator may act (http.auth.roles.operator).");
  }
  if (!sameOrigin(request)) {
    return refuse(403, "origin", "The form was not sent from this console's own page.");
  }
  const form = await readForm(request);
  if (form === undefined) return refuse(400, undefined, "Not a form, or too large.");
  if (!parts.csrf.verify(caller.identity, form.get("csrf"))) {
    const words =
      "The form's token is missing, stale or not yours: reload the page and submit again.";
    return refuse(403, "csrf", words);
  }
  const stream = form.get("stream") ?? "";
  const name = form.get("group") ?? "";
  const group = parts.groups.current().find((g) => g.stream === stream && g.group === name);
  if (group === undefined) return refuse(404, undefined, "No such group.");
  return { form, group, who: caller };
}

/**
 * POST /ui/actions/<kind>: refused (counted, logged once a minute per address) unless an
 * operator sends it from the console's page with their CSRF token; "all" needs the group's name.
 * Runs the CLI's code (the runner), records a ui-action event naming the caller, and answers with
 * what was done (a page of its own: nothing refreshes or re-posts it).
 */
export async function handleAction(
  parts: ActionParts,
  kind: UiActionKind,
  request: IncomingMessage,
  response: ServerResponse,
  caller: Caller | undefined,
): Promise<void> {
  const admitted = await admitAction(parts, request, response, caller);
  if (admitted === undefined) return;
  const { form, group, who } = admitted;
  const back = { stream: group.stream, group: group.group };
  let run: KindRun;
  try {
    run = await runActionKind(parts.runner, kind, form, group, who.name);
  } catch (error) {
    const words = error instanceof Error ? error.message : String(error);
    answer(response, 409, renderActionRefused(`Not done: ${words}`, back));
    return;
  }
  if (!run.ok) {
    if (run.confirmation === true) {
      parts.refusals.note("confirmation", request.socket.remoteAddress, { by: who.name });
    }
    answer(response, 400, renderActionRefused(run.problem, back));
    return;
  }
  const { outcome, selection } = run;
  await audit(parts, who, { kind, group, selection, outcome });
  answer(response, 200, renderActionResult(kind, group, outcome, who.name));
}

/** The ui-action event and an info line: best effort, as every advisory event. */
async function audit(
  parts: ActionParts,
  who: Caller,
  done: {
    kind: UiActionKind;
    group: ResolvedGroup;
    selection: Record<string, unknown>;
    outcome: ActionOutcome;
  },
): Promise<void> {
  const { kind, group, selection, outcome } = done;
  const detail = { action: kind, role: who.role, selection, result: outcome.result };
  parts.logger.info(
    { by: who.name, stream: group.stream, group: group.group, ...detail },
    `console action: ${kind}`,
  );
  const { stream: streamKey, maxLen } = parts.events;
  if (streamKey === "") return;
  const event = {
    type: "ui-action" as const,
    stream: group.stream,
    group: group.group,
    count: outcome.count,
    ids: outcome.ids,
    detail,
  };
  try {
    await withTimeout(
      appendEvent({ redis: parts.redis, streamKey, maxLen, by: who.name }, event),
      AUDIT_TIMEOUT_MS,
      (): never => {
        throw new Error(`no reply within ${AUDIT_TIMEOUT_MS}ms`);
      },
    );
  } catch (error) {
    parts.logger.warn(
      { err: error, stream: streamKey },
      "the ui-action event was not written; the action is done",
    );
  }
}
