import type { Logger } from "pino";
import type { JanitorConfig } from "../core/configTypes.js";
import { startHttpServer, type RunningHttpServer } from "../http/createHttpServer.js";
import type { HttpRoute } from "../http/HttpRoute.js";
import type { Registry } from "prom-client";
import { explainRedisError } from "../redis/explainRedisError.js";
import { lastConnectionError } from "../redis/lastConnectionError.js";
import type { RedisClient } from "../redis/RedisClient.js";
import type { ScrapeRefresher } from "../scrape/createScrapeRefresher.js";

export interface ScrapeEndpointParts {
  config: JanitorConfig;
  registry: Registry;
  logger: Logger;
  refresher: ScrapeRefresher;
  /** The scrape's own connection: readiness says why it does not answer. */
  metricsRedis: RedisClient;
  /** The paths beyond the built-in three (/status.json, /ui): startDaemon builds them. */
  routes: readonly HttpRoute[];
}

/**
 * The daemon's HTTP side: /metrics refreshes the gauges before each scrape; readiness is one
 * PING on the scrape's connection, and a not-ready answer names the Redis failure in words.
 */
export function startScrapeEndpoint(parts: ScrapeEndpointParts): Promise<RunningHttpServer> {
  const { config, refresher, metricsRedis } = parts;
  return startHttpServer({
    ...config.http,
    registry: parts.registry,
    logger: parts.logger,
    routes: parts.routes,
    beforeScrape: () => refresher.refresh(),
    isReady: () => refresher.ping(),
    notReadyReason: () => {
      const cause = lastConnectionError(metricsRedis);
      const problem = cause && explainRedisError(cause, { url: config.redis.url });
      return problem === undefined ? undefined : `redis is not answering: ${problem}`;
    },
  });
}
