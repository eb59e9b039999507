import type { IncomingMessage, ServerResponse } from "node:http";

/** A GET (or HEAD) path beyond /metrics, /livez and /readyz: /status.json, /ui and its pages. */
export interface HttpRoute {
  /** The path a 404 suggests ("/status.json", "/ui"). */
  readonly name: string;
  /** Whether this route serves the path (the URL without its query). */
  matches(path: string): boolean;
  /** Answers the request; a throw becomes a 500 and is logged. */
  handle(request: IncomingMessage, response: ServerResponse): Promise<void>;
}
