import type { IncomingMessage } from "node:http";

/**
 * Whether a POST comes from a page of the console itself: `Sec-Fetch-Site` (which browsers set
 * and pages cannot) must say same-origin when present, and `Origin`, when present, must name the
 * host the request was sent to (its Host header: a reverse proxy must pass it on). A request
 * with neither header is refused: every browser sends Origin with a form's POST, and a script
 * has the CLI.
 */
export function sameOrigin(request: IncomingMessage): boolean {
  const site = request.headers["sec-fetch-site"];
  const origin = request.headers.origin;
  const host = request.headers.host;
  if (site === undefined && origin === undefined) return false;
  if (site !== undefined && site !== "same-origin") return false;
  if (origin === undefined) return true;
  if (host === undefined || origin === "null") return false;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}
