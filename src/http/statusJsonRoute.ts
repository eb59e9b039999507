import type { StatusBoard } from "../core/groupStatus.js";
import type { HttpRoute } from "./HttpRoute.js";
import { send } from "./send.js";

/**
 * GET /status.json (README "Group status"): the board's report as of its latest sample,
 * the same body on every replica; `stream-janitor status --json` prints the same.
 */
export function statusJsonRoute(board: StatusBoard): HttpRoute {
  return {
    name: "/status.json",
    matches: (path) => path === "/status.json",
    handle: (_request, response) => {
      send(response, 200, JSON.stringify(board.report()), "application/json");
      return Promise.resolve();
    },
  };
}
