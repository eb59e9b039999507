import { pino } from "pino";
import { Registry } from "prom-client";
import {
  startHttpServer,
  type HttpServerOptions,
  type RunningHttpServer,
} from "../../src/http/createHttpServer.js";

/**
 * The HTTP server a route test needs and nothing more: loopback, a free port, an empty registry,
 * a silent logger, a scrape with nothing to read, always ready. `extra` adds or overrides options
 * (auth, maxConnections).
 */
export function startRouteServer(
  routes: HttpServerOptions["routes"],
  extra: Partial<HttpServerOptions> = {},
): Promise<RunningHttpServer> {
  return startHttpServer({
    host: "127.0.0.1",
    port: 0,
    registry: new Registry(),
    logger: pino({ level: "silent" }),
    beforeScrape: () => Promise.resolve(),
    isReady: () => Promise.resolve(true),
    routes,
    ...extra,
  });
}
