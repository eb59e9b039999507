import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { ASSUMED_OPEN_FILES_LIMIT, connectionCap, MAX_HTTP_CONNECTIONS } from "./connectionCap.js";
import { capConnections } from "./capConnections.js";
import { acceptsGzip } from "./gzipBody.js";
import { readOpenFilesLimit } from "./openFilesLimit.js";
import type { HttpAuthGuard } from "./HttpAuthGuard.js";
import type { Caller, HttpRoute } from "./HttpRoute.js";
import { send } from "./send.js";
import {
  sendInflated,
  sharedExposition,
  type Exposition,
  type ScrapeReadOutcome,
} from "./sharedExposition.js";

export interface HttpServerOptions {
  host: string;
  port: number;
  registry: Registry;
  logger: Logger;
  /**
   * Refreshes the gauges before a scrape; must never throw (a failed read drops series instead).
   * `landed` when the scrape stopped waiting for its read (see sharedExposition). `lastRenderMs`:
   * how long writing the page took last time, which a scrape that waits spends after its read.
   */
  beforeScrape: (lastRenderMs: number) => Promise<ScrapeReadOutcome | undefined> | Promise<void>;
  /**
   * Given the page's writing ahead: whoever knows when the gauges changed without a scrape (the
   * refresher's start-up read, its read of a new list of groups) calls it then, so the next
   * scrape that cannot wait for its read has that page at once (see sharedExposition).
   */
  writeAheadOn?: (writeAhead: () => void) => void;
  /**
   * Asked as each scrape comes: a scrape whose read comes in time is answered within this many ms
   * of its request, with the last kept page if its own is not written by then (see
   * sharedExposition); undefined: it waits for its page.
   */
  scrapeAnswerWithinMs?: () => number | undefined;
  /** True once configuration is loaded and Redis answers; never depends on leadership. */
  isReady: () => Promise<boolean>;
  /** Why the process is not ready, for the /readyz body (e.g. "authentication failed at ..."). */
  notReadyReason?: () => string | undefined;
  /** Cap on open connections (default: connectionCap of the process's open-files limit). */
  maxConnections?: number;
  /** Further routes (/status.json, /ui...), tried in order after the built-in three. */
  routes?: readonly HttpRoute[];
  /**
   * http.auth: checked before anything else on every path (it lets /livez and /readyz by); the
   * caller it names is handed to the route.
   */
  auth?: Pick<HttpAuthGuard, "admit">;
}

export interface RunningHttpServer {
  readonly server: Server;
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Bounds that keep the port answering under a port scanner or a slow-loris: a client must send
 * its headers within HEADERS_TIMEOUT_MS and its request within REQUEST_TIMEOUT_MS (checked every
 * CHECK_INTERVAL_MS), an idle keep-alive connection closes after KEEP_ALIVE_TIMEOUT_MS, and at
 * most a cap of connections are open (connectionCap: below the process's limit on open files,
 * at most MAX_CONNECTIONS): beyond it the oldest connection that is not serving a request
 * (half-open or idle) is closed to make room, so a probe still gets in while the cap holds the
 * file descriptors the Redis connections need.
 */
export const HTTP_LIMITS = {
  HEADERS_TIMEOUT_MS: 5_000,
  REQUEST_TIMEOUT_MS: 10_000,
  KEEP_ALIVE_TIMEOUT_MS: 5_000,
  CHECK_INTERVAL_MS: 1_000,
  MAX_CONNECTIONS: MAX_HTTP_CONNECTIONS,
} as const;

/** A clear one-line failure to listen (EADDRINUSE, EACCES...), naming the setting to change. */
export class HttpListenError extends Error {
  override readonly name = "HttpListenError";
  readonly code: string;
  constructor(host: string, port: number, code: string) {
    const reason =
      code === "EADDRINUSE"
        ? "another process already listens there"
        : code === "EACCES"
          ? "this user may not bind that port"
          : code === "EADDRNOTAVAIL"
            ? "that address is not one of this machine's"
            : "the port could not be opened";
    super(
      `cannot listen on http.host ${host}, http.port ${port} (${code}): ${reason}; set http.port (STREAM_JANITOR_HTTP_PORT) or http.host`,
    );
    this.code = code;
  }
}

/** /livez, /readyz and /metrics: true when `path` was one of them (and has been answered). */
async function answerBuiltIn(
  options: HttpServerOptions,
  exposition: Exposition,
  path: string,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<boolean> {
  switch (path) {
    case "/livez":
      // Answering at all proves the process and its event loop work; Redis is not asked.
      send(response, 200, "ok\n");
      return true;
    case "/readyz": {
      const ready = await options.isReady();
      const reason = ready ? undefined : (options.notReadyReason?.() ?? "redis is not answering");
      send(response, ready ? 200 : 503, ready ? "ready\n" : `not ready: ${reason}\n`);
      return true;
    }
    case "/metrics": {
      const body = await exposition();
      const { contentType } = options.registry;
      if (acceptsGzip(request)) {
        send(response, 200, body, contentType, {
          "content-encoding": "gzip",
          vary: "accept-encoding",
        });
        return true;
      }
      await sendInflated(response, body, contentType);
      return true;
    }
    default:
      return false;
  }
}

/**
 * One request: http.auth first (it names the caller), then GET and HEAD anywhere, POST only where
 * a route takes it (the console's actions): anything else is 405.
 */
function requestHandler(options: HttpServerOptions) {
  const exposition = sharedExposition(options.beforeScrape, options.registry, undefined, {
    answerWithinMs: options.scrapeAnswerWithinMs,
  });
  options.writeAheadOn?.(() => void exposition.prepare());
  return async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = (request.url ?? "/").split("?")[0] ?? "/";
    let caller: Caller | undefined;
    if (options.auth !== undefined) {
      caller = options.auth.admit(path, request, response);
      if (caller === undefined) return;
    }
    const route = options.routes?.find((candidate) => candidate.matches(path));
    const read = request.method === "GET" || request.method === "HEAD";
    if (!read && !(request.method === "POST" && route?.acceptsPost?.(path) === true)) {
      send(response, 405, "method not allowed\n");
      return;
    }
    if (read && (await answerBuiltIn(options, exposition, path, request, response))) return;
    if (route !== undefined) {
      await route.handle(request, response, caller);
      return;
    }
    const paths = ["/metrics", "/livez", "/readyz", ...(options.routes ?? []).map((r) => r.name)];
    send(response, 404, `not found: try ${paths.join(", ")}\n`);
  };
}

async function listen(server: Server, host: string, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException): void => {
      reject(new HttpListenError(host, port, error.code ?? "unknown"));
    };
    server.once("error", failed);
    server.listen(port, host, () => {
      server.off("error", failed);
      resolve();
    });
  });
}

/** The URL a client on this machine reaches the server at (a wildcard address as loopback). */
function reachableUrl(server: Server): string {
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return `http://${host === "0.0.0.0" || host === "[::]" ? "127.0.0.1" : host}:${address.port}`;
}

function describeLimit(openFilesLimit: number | undefined): string | number {
  if (openFilesLimit === undefined) return `unknown (assumed ${ASSUMED_OPEN_FILES_LIMIT})`;
  return Number.isFinite(openFilesLimit) ? openFilesLimit : "unlimited";
}

/** /metrics, /livez, /readyz and the given routes on node:http: a few routes need no framework. */
export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const log = options.logger.child({ component: "http" });
  const handle = requestHandler(options);
  const server = createServer(
    {
      headersTimeout: HTTP_LIMITS.HEADERS_TIMEOUT_MS,
      requestTimeout: HTTP_LIMITS.REQUEST_TIMEOUT_MS,
      keepAliveTimeout: HTTP_LIMITS.KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: HTTP_LIMITS.CHECK_INTERVAL_MS,
    },
    (request, response) => {
      handle(request, response).catch((error: unknown) => {
        log.error({ err: error, path: request.url }, "http handler failed");
        if (!response.headersSent) send(response, 500, "internal error\n");
        else response.destroy();
      });
    },
  );
  const openFilesLimit =
    options.maxConnections === undefined ? await readOpenFilesLimit() : undefined;
  const maxConnections = options.maxConnections ?? connectionCap(openFilesLimit);
  capConnections(server, maxConnections, log);
  await listen(server, options.host, options.port);
  const url = reachableUrl(server);
  const limitText = describeLimit(openFilesLimit);
  log.info({ url, maxConnections, openFilesLimit: limitText }, "http server listening");
  return {
    server,
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
