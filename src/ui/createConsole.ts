import type { IncomingMessage, ServerResponse } from "node:http";
import type { JanitorConfig } from "../core/configTypes.js";
import type { GroupSource } from "../core/GroupSet.js";
import type { StatusBoard } from "../core/groupStatus.js";
import { acceptsGzip, gzipBody } from "../http/gzipBody.js";
import type { HttpRoute } from "../http/HttpRoute.js";
import { send } from "../http/send.js";
import type { RedisClient } from "../redis/RedisClient.js";
import { parseOverviewQuery } from "./overviewQuery.js";
import { readGroupDetail } from "./readGroupDetail.js";
import { readLeaseState } from "../reads/readLeaseState.js";
import { renderGroupPage, renderUnknownGroup } from "./renderGroupPage.js";
import { renderOverview } from "./renderOverview.js";
import { UI_HEADERS } from "./renderPage.js";
import { renderSweeperPage } from "./renderSweeperPage.js";
import { STYLESHEET } from "./stylesheet.js";
import type { SweepLog } from "./SweepLog.js";

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
}

const HTML = "text/html; charset=utf-8";

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

/**
 * The web console (README "Web console") as one HTTP route for /ui and its pages. Read-only: GET
 * and HEAD only (the server answers 405 to anything else), no form posts anything anywhere but
 * back to the overview's query string. With http.ui.enabled false the daemon does not add it,
 * and /ui answers 404.
 */
export function createConsoleRoute(parts: ConsoleParts): HttpRoute {
  const { board, sweeps, groups, redis, config } = parts;
  const refreshSeconds = Math.max(1, Math.round(config.status.intervalMs / 1000));
  const pages: Record<
    string,
    (request: IncomingMessage, response: ServerResponse, params: URLSearchParams) => Promise<void>
  > = {
    "/ui": (request, response, params) =>
      sendPage(
        request,
        response,
        200,
        renderOverview({
          report: board.report(),
          sweeps,
          query: parseOverviewQuery(params),
          refreshSeconds,
        }),
      ),
    "/ui/group": async (request, response, params) => {
      const stream = params.get("stream") ?? "";
      const name = params.get("group") ?? "";
      const group = groups.current().find((g) => g.stream === stream && g.group === name);
      if (group === undefined) {
        await sendPage(request, response, 404, renderUnknownGroup(stream, name));
        return;
      }
      const { showBodies } = config.http.ui;
      const detail = await readGroupDetail(redis, group, config.events.stream, { showBodies });
      const report = board.report();
      await sendPage(
        request,
        response,
        200,
        renderGroupPage({
          group,
          status: board.statusOf(group.id),
          nowMs: report.generatedAt,
          detail,
          lastSweep: sweeps.lastOf(group.stream, group.group),
          showBodies,
          paused: params.get("pause") === "1",
          refreshSeconds,
        }),
      );
    },
    "/ui/sweeper": async (request, response, params) => {
      const lease = await readLeaseState(redis, config.lease.key);
      await sendPage(
        request,
        response,
        200,
        renderSweeperPage({
          report: board.report(),
          lease,
          leaseKey: config.lease.key,
          recent: sweeps.recent(),
          paused: params.get("pause") === "1",
          refreshSeconds,
        }),
      );
    },
    "/ui/style.css": (_request, response) => {
      send(response, 200, STYLESHEET, "text/css; charset=utf-8", {
        ...UI_HEADERS,
        "cache-control": "public, max-age=3600",
      });
      return Promise.resolve();
    },
  };
  return {
    name: "/ui",
    matches: (path) => Object.hasOwn(pages, path === "/ui/" ? "/ui" : path),
    handle: async (request, response) => {
      const url = new URL(request.url ?? "/", "http://console.invalid");
      const path = url.pathname === "/ui/" ? "/ui" : url.pathname;
      const page = pages[path];
      if (page !== undefined) await page(request, response, url.searchParams);
    },
  };
}
