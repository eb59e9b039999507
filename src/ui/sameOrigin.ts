import type { IncomingMessage } from "node:http";

/**
 * Whether a POST comes from a page of the console itself. `Sec-Fetch-Site` (set by the browser,
 * never by a page) must say same-origin when it is sent; `Origin`, when it names a site, must
 * name the host the request was sent to (its Host header: a reverse proxy must pass it on).
 * `Origin: null` is what Chromium sends for a form of a no-referrer page (the console's own),
 * so it counts only beside `Sec-Fetch-Site: same-origin`. A request that says neither is refused:
 * every browser sends one with a form's POST, and a script has the CLI.
 */
export function sameOrigin(request: IncomingMessage): boolean {
  const site = request.headers["sec-fetch-site"];
  const origin = request.headers.origin;
  if (site !== undefined && site !== "same-origin") return false;
  if (origin === undefined || origin === "null") return site === "same-origin";
  const host = request.headers.host;
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}
