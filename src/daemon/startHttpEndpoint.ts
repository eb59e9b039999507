import type { Logger } from "pino";
import { ConfigError } from "../config/ConfigError.js";
import { readHttpAccess } from "../config/httpCredentials.js";
import type { JanitorConfig } from "../core/configTypes.js";
import { startHttpServer, type RunningHttpServer } from "../http/createHttpServer.js";
import { HttpAuthGuard } from "../http/HttpAuthGuard.js";
import type { HttpRoute } from "../http/HttpRoute.js";
import type { Registry } from "prom-client";
import { createMetrics } from "../metrics/createMetrics.js";
import { METRIC_TABLE } from "../metrics/metricTable.js";
import { explainRedisError } from "../redis/explainRedisError.js";
import { lastConnectionError } from "../redis/lastConnectionError.js";
import type { RedisClient } from "../redis/RedisClient.js";
import type { ScrapeRefresher } from "../scrape/createScrapeRefresher.js";

export interface HttpEndpointParts {
  config: JanitorConfig;
  registry: Registry;
  logger: Logger;
  refresher: ScrapeRefresher;
  /** The scrape's own connection: readiness says why it does not answer. */
  metricsRedis: RedisClient;
  /** The paths beyond the built-in three (/status.json, /ui): startDaemon builds them. */
  routes: readonly HttpRoute[];
}

export interface HttpEndpoint extends RunningHttpServer {
  /**
   * SIGHUP: reads the http.auth files again, so a rotated token or password file is in effect
   * without a restart. The file's path (like every http.* key) changes only with a restart; a
   * file that no longer reads is logged and the credentials in effect stay.
   */
  rereadCredentials(): Promise<void>;
}

/**
 * The daemon's HTTP side: /metrics refreshes the gauges before each scrape; readiness is one
 * PING on the scrape's connection, and a not-ready answer names the Redis failure in words.
 * With http.auth every other path needs the credentials its files hold (each with its role).
 */
export async function startHttpEndpoint(parts: HttpEndpointParts): Promise<HttpEndpoint> {
  const { config, refresher, metricsRedis } = parts;
  const credentials = await readHttpAccess(config.http.auth);
  const auth =
    credentials.length === 0
      ? undefined
      : new HttpAuthGuard({
          credentials,
          logger: parts.logger.child({ component: "http" }),
          refusals: createMetrics(parts.registry, METRIC_TABLE.http).unauthorized,
        });
  const server = await startHttpServer({
    ...config.http,
    registry: parts.registry,
    logger: parts.logger,
    auth,
    routes: parts.routes,
    beforeScrape: (lastRenderMs) => refresher.refreshForScrape(lastRenderMs),
    writeAheadOn: (writeAhead) => refresher.onBackgroundRead(writeAhead),
    scrapeAnswerWithinMs: () => refresher.scrapeAnswerWithinMs(),
    isReady: () => refresher.ping(),
    notReadyReason: () => {
      const cause = lastConnectionError(metricsRedis);
      const problem = cause && explainRedisError(cause, { url: config.redis.url });
      return problem === undefined ? undefined : `redis is not answering: ${problem}`;
    },
  });
  const rereadCredentials = async (): Promise<void> => {
    if (auth === undefined) return;
    try {
      const next = await readHttpAccess(config.http.auth);
      if (next.length > 0) auth.replaceCredentials(next);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      parts.logger.error(
        { problems: error.problems.map((problem) => problem.message) },
        "http.auth file could not be read again: the credentials read before stay in effect",
      );
    }
  };
  return { ...server, rereadCredentials };
}
