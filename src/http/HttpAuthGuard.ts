import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Counter } from "prom-client";
import type { HttpCredentials } from "../config/httpCredentials.js";
import { authorizeRequest } from "./authorizeRequest.js";
import { send } from "./send.js";

/** Paths that answer without credentials: probes (kubelet, load balancers) carry none. */
const OPEN_PATHS: ReadonlySet<string> = new Set(["/livez", "/readyz"]);

/** At most one refusal line per this long: a scanner must not flood the log. */
export const REFUSAL_LOG_INTERVAL_MS = 60_000;

export interface HttpAuthGuardOptions {
  credentials: HttpCredentials;
  logger: Logger;
  /** stream_janitor_http_unauthorized_total (METRIC_TABLE.http). */
  refusals: Counter;
  now?: () => number;
}

/**
 * http.auth: every path but /livez and /readyz (unknown ones too: a client without credentials
 * learns nothing, not even which paths exist) needs the configured credentials, else 401 with
 * the scheme's challenge. Refusals are counted; the first of an episode (a minute) is logged at
 * warn with the remote address, and the next episode's first line says how many came between.
 */
export class HttpAuthGuard {
  private credentials: HttpCredentials;
  private readonly log: Logger;
  private readonly now: () => number;
  private episodeStart = Number.NEGATIVE_INFINITY;
  private refusedSinceLogged = 0;

  constructor(private readonly options: HttpAuthGuardOptions) {
    this.credentials = options.credentials;
    this.log = options.logger;
    this.now = options.now ?? Date.now;
  }

  /** A SIGHUP read the file again (a rotated secret): later requests are checked against it. */
  replaceCredentials(credentials: HttpCredentials): void {
    this.credentials = credentials;
  }

  /** True when the request may go on; otherwise the 401 has been sent. */
  admit(path: string, request: IncomingMessage, response: ServerResponse): boolean {
    if (OPEN_PATHS.has(path)) return true;
    const { credentials } = this;
    if (authorizeRequest(request, credentials)) return true;
    const challenge = credentials.scheme === "Bearer" ? "Bearer" : 'Basic realm="stream-janitor"';
    send(response, 401, "unauthorized\n", undefined, { "www-authenticate": challenge });
    this.options.refusals.inc();
    this.noteRefusal(request);
    return false;
  }

  private noteRefusal(request: IncomingMessage): void {
    this.refusedSinceLogged += 1;
    const now = this.now();
    if (now - this.episodeStart < REFUSAL_LOG_INTERVAL_MS) return;
    this.log.warn(
      {
        remoteAddress: request.socket.remoteAddress,
        refused: this.refusedSinceLogged,
        scheme: this.credentials.scheme,
      },
      `http request refused: missing or wrong ${this.credentials.scheme} credentials (http.auth); further refusals within a minute are only counted (stream_janitor_http_unauthorized_total)`,
    );
    this.episodeStart = now;
    this.refusedSinceLogged = 0;
  }
}
