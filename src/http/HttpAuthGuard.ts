import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Counter } from "prom-client";
import type { HttpCredentials, RoleCredentials } from "../config/httpCredentials.js";
import { identifyCaller } from "./authorizeRequest.js";
import type { Caller } from "./HttpRoute.js";
import { send } from "./send.js";

/** Paths that answer without credentials: probes (kubelet, load balancers) carry none. */
const OPEN_PATHS: ReadonlySet<string> = new Set(["/livez", "/readyz"]);

/** At most one refusal line per this long: a scanner must not flood the log. */
export const REFUSAL_LOG_INTERVAL_MS = 60_000;

/** What /livez and /readyz answer to: nobody in particular (no route sees it). */
const ANYONE: Caller = { role: "viewer", name: "", identity: "" };

/** One file (today's http.auth: viewers), or every file with its role (readHttpAccess). */
type Access = HttpCredentials | readonly RoleCredentials[];

function withRoles(access: Access): readonly RoleCredentials[] {
  return "scheme" in access ? [{ role: "viewer", credentials: access }] : access;
}

export interface HttpAuthGuardOptions {
  credentials: Access;
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
  private access: readonly RoleCredentials[];
  private readonly log: Logger;
  private readonly now: () => number;
  private episodeStart = Number.NEGATIVE_INFINITY;
  private refusedSinceLogged = 0;

  constructor(private readonly options: HttpAuthGuardOptions) {
    this.access = withRoles(options.credentials);
    this.log = options.logger;
    this.now = options.now ?? Date.now;
  }

  /** A SIGHUP read the file again (a rotated secret): later requests are checked against it. */
  replaceCredentials(credentials: Access): void {
    this.access = withRoles(credentials);
  }

  /** Who sent the request, when it may go on; otherwise undefined, and the 401 has been sent. */
  admit(path: string, request: IncomingMessage, response: ServerResponse): Caller | undefined {
    if (OPEN_PATHS.has(path)) return ANYONE;
    const caller = identifyCaller(request, this.access);
    if (caller !== undefined) return caller;
    // A browser asks for a user and password only when challenged for Basic.
    const challenge = this.scheme() === "Bearer" ? "Bearer" : 'Basic realm="stream-janitor"';
    send(response, 401, "unauthorized\n", undefined, { "www-authenticate": challenge });
    this.options.refusals.inc();
    this.noteRefusal(request);
    return undefined;
  }

  /** Basic when any file takes it, else Bearer. */
  private scheme(): HttpCredentials["scheme"] {
    return this.access.some((set) => set.credentials.scheme === "Basic") ? "Basic" : "Bearer";
  }

  private noteRefusal(request: IncomingMessage): void {
    this.refusedSinceLogged += 1;
    const now = this.now();
    if (now - this.episodeStart < REFUSAL_LOG_INTERVAL_MS) return;
    this.log.warn(
      {
        remoteAddress: request.socket.remoteAddress,
        refused: this.refusedSinceLogged,
        scheme: this.scheme(),
      },
      `http request refused: missing or wrong ${this.scheme()} credentials (http.auth); further refusals within a minute are only counted (stream_janitor_http_unauthorized_total)`,
    );
    this.episodeStart = now;
    this.refusedSinceLogged = 0;
  }
}
