import type { ServerResponse } from "node:http";

/** One whole answer, never cached: every path serves the state of now. */
export function send(
  response: ServerResponse,
  status: number,
  body: string | Buffer,
  contentType = "text/plain; charset=utf-8",
  extraHeaders: Record<string, string> = {},
): void {
  response.writeHead(status, {
    "content-type": contentType,
    "cache-control": "no-store",
    ...extraHeaders,
  });
  response.end(body);
}
