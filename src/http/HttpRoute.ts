import type { IncomingMessage, ServerResponse } from "node:http";
import type { HttpRole } from "../config/httpRoles.js";

/** Who sent a request, as http.auth found them (README "Roles and actions"). */
export interface Caller {
  readonly role: HttpRole;
  /** For audit: the basic auth user, or the token's name (`token-<line>` when unnamed). */
  readonly name: string;
  /**
   * The credential itself, as a stable string (its role and the secret's SHA-256): what a CSRF
   * token is bound to, so that a token taken from one credential's page fails for any other.
   */
  readonly identity: string;
}

/** A path beyond /metrics, /livez and /readyz: /status.json, /ui and its pages. */
export interface HttpRoute {
  /** The path a 404 suggests ("/status.json", "/ui"). */
  readonly name: string;
  /** Whether this route serves the path (the URL without its query). */
  matches(path: string): boolean;
  /** Whether it takes a POST at this path (the console's actions); others answer 405. */
  acceptsPost?(path: string): boolean;
  /**
   * Answers the request; a throw becomes a 500 and is logged. `caller` is set when http.auth is
   * on (it has admitted the request).
   */
  handle(request: IncomingMessage, response: ServerResponse, caller?: Caller): Promise<void>;
}
