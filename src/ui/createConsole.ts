import type { IncomingMessage, ServerResponse } from "node:http";
import type { JanitorConfig } from "../core/configTypes.js";
import type { GroupSource } from "../core/GroupSet.js";
import type { StatusBoard } from "../core/groupStatus.js";
import { acceptsGzip, gzipBody } from "../http/gzipBody.js";
import type { Caller, HttpRoute } from "../http/HttpRoute.js";
import { send } from "../http/send.js";
import type { RedisClient } from "../redis/RedisClient.js";
import type { FormContext } from "./actionForms.js";
import { handleAction, type ActionParts } from "./handleAction.js";
import { parseOverviewQuery } from "./overviewQuery.js";
import { readGroupDetail } from "./readGroupDetail.js";
import { readGroupTasks, readTask } from "./readGroupTasks.js";
import { readFind } from "./readFind.js";
import { renderBadFind, renderFindPage } from "./renderFindPage.js";
import { renderTaskPage } from "./renderTasks.js";
import { readLeaseState } from "../reads/readLeaseState.js";
import { renderGroupPage, renderUnknownGroup } from "./renderGroupPage.js";
import { renderOverview } from "./renderOverview.js";
import { UI_HEADERS } from "./renderPage.js";
import { renderSweeperPage } from "./renderSweeperPage.js";
import { STYLESHEET } from "./stylesheet.js";
import type { SweepLog } from "./SweepLog.js";
import { UI_ACTIONS, type UiActionKind } from "./UiActions.js";
import { groupHistoryPart } from "./renderHistoryCharts.js";
import type { HistoryBoard } from "../status/GroupHistory.js";

export interface ConsoleParts {
  /** The status sampler's verdicts: the overview reads nothing else (no Redis read at all). */
  board: StatusBoard;
  /** The leader's recent sweeps (empty on a standby). */
  sweeps: SweepLog;
  /** The configured and discovered groups: a group page exists only for one of them. */
  groups: GroupSource;
  /** For the group and sweeper pages' bounded reads. */
  redis: RedisClient;
  config: Pick<JanitorConfig, "http" | "status" | "events" | "lease">;
  /** With http.ui.actions: what the actions run and check (README "Roles and actions"). */
  actions?: Omit<ActionParts, "groups">;
  /** The groups' last minutes (README "Web console"); undefined when the history is off. */
  history?: HistoryBoard | undefined;
}

const HTML = "text/html; charset=utf-8";

type Page = (
  request: IncomingMessage,
  response: ServerResponse,
  params: URLSearchParams,
  caller: Caller | undefined,
) => Promise<void>;

/** Compressed when the client takes it: a page of 1,000 rows shrinks about tenfold. */
async function sendPage(
  request: IncomingMessage,
  response: ServerResponse,
  status: number,
  page: string,
): Promise<void> {
  if (!acceptsGzip(request)) {
    send(response, status, page, HTML, { ...UI_HEADERS, vary: "accept-encoding" });
    return;
  }
  send(response, status, await gzipBody(page), HTML, {
    ...UI_HEADERS,
    "content-encoding": "gzip",
    vary: "accept-encoding",
  });
}

/** The forms of an operator's pages, when actions are on; a viewer's pages have none. */
function formsFor(parts: ConsoleParts, caller: Caller | undefined): FormContext | undefined {
  if (parts.actions === undefined || caller?.role !== "operator") return undefined;
  return { csrf: parts.actions.csrf.issue(caller.identity) };
}

/** GET /ui/group?stream=S&group=G. */
function groupPage(parts: ConsoleParts, refreshSeconds: number): Page {
  const { board, sweeps, groups, redis, config } = parts;
  return async (request, response, params, caller) => {
    const stream = params.get("stream") ?? "";
    const name = params.get("group") ?? "";
    const group = groups.current().find((g) => g.stream === stream && g.group === name);
    if (group === undefined) {
      await sendPage(request, response, 404, renderUnknownGroup(stream, name));
      return;
    }
    const { showBodies } = config.http.ui;
    const before = streamIdParam(params, "before");
    const detail = await readGroupDetail(redis, group, config.events.stream, {
      showBodies,
      ...(before !== undefined && { before }),
    });
    const report = board.report();
    const forms = formsFor(parts, caller);
    const tasks = await readGroupTasks(redis, config.lease.key, group);
    const view = {
      tasks,
      group,
      status: board.statusOf(group.id),
      nowMs: report.generatedAt,
      detail,
      lastSweep: sweeps.lastOf(group.stream, group.group),
      showBodies,
      paused: params.get("pause") === "1",
      refreshSeconds,
      ...(before !== undefined && { before }),
      ...(forms !== undefined && { forms }),
      ...(parts.history && { history: groupHistoryPart(parts.history, group.id, report) }),
    };
    await sendPage(request, response, 200, renderGroupPage(view));
  };
}

/** GET /ui/task?id=ID: one redrive task; an operator's has its cancel form while it runs. */
function taskPage(parts: ConsoleParts, refreshSeconds: number): Page {
  return async (request, response, params, caller) => {
    const id = params.get("id") ?? "";
    const task = await readTask(parts.redis, parts.config.lease.key, id);
    const found = task.ok ? task.value : undefined;
    const group = parts.groups
      .current()
      .find((g) => g.stream === found?.stream && g.group === found.group);
    const forms = formsFor(parts, caller);
    const view = { id, task, group, refreshSeconds, ...(forms !== undefined && { forms }) };
    await sendPage(
      request,
      response,
      task.ok && found === undefined ? 404 : 200,
      renderTaskPage(view),
    );
  };
}

/** GET /ui/find?stream=S&group=G&id=ID: where the id is, within the page's byte budget. */
function findPage(parts: ConsoleParts): Page {
  return async (request, response, params) => {
    const group = parts.groups
      .current()
      .find((g) => g.stream === params.get("stream") && g.group === params.get("group"));
    if (group === undefined) {
      const page = renderUnknownGroup(params.get("stream") ?? "", params.get("group") ?? "");
      await sendPage(request, response, 404, page);
      return;
    }
    const id = (params.get("id") ?? "").trim();
    if (streamIdParam(params, "id") === undefined) {
      await sendPage(request, response, 400, renderBadFind(group, id));
      return;
    }
    const found = await readFind(parts.redis, group, id);
    await sendPage(request, response, 200, renderFindPage(group, id, found));
  };
}

/** The GET pages of the console, by path. */
function consolePages(parts: ConsoleParts): Record<string, Page> {
  const { board, sweeps, redis, config } = parts;
  const refreshSeconds = Math.max(1, Math.round(config.status.intervalMs / 1000));
  return {
    "/ui": (request, response, params) => {
      const query = parseOverviewQuery(params);
      const page = renderOverview({
        report: board.report(),
        sweeps,
        query,
        refreshSeconds,
        ...(parts.history && { history: parts.history }),
      });
      return sendPage(request, response, 200, page);
    },
    "/ui/group": groupPage(parts, refreshSeconds),
    "/ui/task": taskPage(parts, refreshSeconds),
    "/ui/find": findPage(parts),
    "/ui/sweeper": async (request, response, params) => {
      const lease = await readLeaseState(redis, config.lease.key);
      const workedOnly = params.get("worked") === "1";
      const page = renderSweeperPage({
        workedOnly,
        report: board.report(),
        lease,
        leaseKey: config.lease.key,
        recent: sweeps.recent({ workedOnly }),
        paused: params.get("pause") === "1",
        refreshSeconds,
      });
      await sendPage(request, response, 200, page);
    },
    "/ui/style.css": (_request, response) => {
      send(response, 200, STYLESHEET, "text/css; charset=utf-8", {
        ...UI_HEADERS,
        "cache-control": "public, max-age=3600",
      });
      return Promise.resolve();
    },
  };
}

/** A stream id from the query string, or undefined when absent or not an id. */
function streamIdParam(params: URLSearchParams, name: string): string | undefined {
  const value = (params.get(name) ?? "").trim();
  return /^\d+-\d+$/u.test(value) ? value : undefined;
}

function actionOf(path: string): UiActionKind | undefined {
  const kind = path.startsWith("/ui/actions/") ? path.slice("/ui/actions/".length) : "";
  return (UI_ACTIONS as readonly string[]).includes(kind) ? (kind as UiActionKind) : undefined;
}

/**
 * The web console (README "Web console") as one HTTP route for /ui and its pages. GET and HEAD
 * never change anything; with http.ui.actions an operator's POST to /ui/actions/{redrive,purge,
 * reap,task,cancel} acts (handleAction), and any other POST is 405. With http.ui.enabled false the daemon
 * does not add it, and /ui answers 404.
 */
export function createConsoleRoute(parts: ConsoleParts): HttpRoute {
  const pages = consolePages(parts);
  const { actions } = parts;
  const canonical = (path: string): string => (path === "/ui/" ? "/ui" : path);
  const acceptsPost = (path: string): boolean =>
    actions !== undefined && actionOf(path) !== undefined;
  return {
    name: "/ui",
    matches: (path) => Object.hasOwn(pages, canonical(path)) || acceptsPost(path),
    acceptsPost,
    handle: async (request, response, caller) => {
      const url = new URL(request.url ?? "/", "http://console.invalid");
      const path = canonical(url.pathname);
      const kind = actionOf(path);
      if (actions !== undefined && kind !== undefined) {
        if (request.method === "POST") {
          await handleAction({ ...actions, groups: parts.groups }, kind, request, response, caller);
        } else {
          // GET never acts: an action is a form's POST.
          send(response, 405, "method not allowed: an action is a POST\n", undefined, {
            allow: "POST",
          });
        }
        return;
      }
      const page = pages[path];
      if (page !== undefined) await page(request, response, url.searchParams, caller);
    },
  };
}
