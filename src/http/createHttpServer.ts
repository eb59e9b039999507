import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { Registry } from "prom-client";

export interface HttpServerOptions {
  host: string;
  port: number;
  registry: Registry;
  logger: Logger;
  /** Refreshes the gauges before a scrape; must never throw (a failed read drops series instead). */
  beforeScrape: () => Promise<void>;
  /** True once configuration is loaded and Redis answers; never depends on leadership. */
  isReady: () => Promise<boolean>;
}

export interface RunningHttpServer {
  readonly server: Server;
  readonly url: string;
  close(): Promise<void>;
}

function send(
  response: ServerResponse,
  status: number,
  body: string,
  contentType = "text/plain; charset=utf-8",
): void {
  response.writeHead(status, { "content-type": contentType, "cache-control": "no-store" });
  response.end(body);
}

/** /metrics, /livez and /readyz on node:http: three routes need no framework. */
export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const log = options.logger.child({ component: "http" });
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = (request.url ?? "/").split("?")[0];
    if (request.method !== "GET" && request.method !== "HEAD") {
      send(response, 405, "method not allowed\n");
      return;
    }
    switch (path) {
      case "/livez":
        // Answering at all proves the process and its event loop work; Redis is not asked.
        send(response, 200, "ok\n");
        return;
      case "/readyz": {
        const ready = await options.isReady();
        send(
          response,
          ready ? 200 : 503,
          ready ? "ready\n" : "not ready: redis is not answering\n",
        );
        return;
      }
      case "/metrics": {
        await options.beforeScrape();
        send(response, 200, await options.registry.metrics(), options.registry.contentType);
        return;
      }
      default:
        send(response, 404, "not found: try /metrics, /livez or /readyz\n");
    }
  };
  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      log.error({ err: error, path: request.url }, "http handler failed");
      if (!response.headersSent) send(response, 500, "internal error\n");
      else response.destroy();
    });
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host === "0.0.0.0" || host === "[::]" ? "127.0.0.1" : host}:${address.port}`;
  log.info({ url }, "http server listening");
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
