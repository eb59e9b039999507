import type { Logger } from "pino";
import { Registry } from "prom-client";
import type { JanitorConfig } from "../config/types.js";
import { startHttpServer } from "../http/createHttpServer.js";
import { Lease } from "../lease/Lease.js";
import { createJanitorMetrics } from "../metrics/janitorMetrics.js";
import { connectRedis, isCluster } from "../redis/connectRedis.js";
import { registerScripts, type RedisClient } from "../redis/scriptedRedis.js";
import { checkRequeueTarget } from "../sweep/checkRequeueTarget.js";
import { keysOutsideSourceSlot, resolveGroup } from "../sweep/resolveGroup.js";
import { createScrapeRefresher } from "../metrics/createScrapeRefresher.js";
import { Supervisor } from "./Supervisor.js";
import { TeardownStack } from "./TeardownStack.js";
import { waitForRedis } from "./waitForRedis.js";

export interface RunningDaemon {
  readonly httpUrl: string;
  /** Graceful stop: sweeps end at a page boundary, the lease is released, then everything closes. */
  stop(): Promise<void>;
}

export interface DaemonDependencies {
  logger: Logger;
  version: string;
  /** Called when the daemon cannot go on (an unsupported Redis server); the caller exits. */
  onFatal: (error: unknown) => void;
}

/** How long the sweep connection waits for one reply; a page script is bounded to milliseconds. */
const SWEEP_COMMAND_TIMEOUT_MS = 10_000;
const METRICS_COMMAND_TIMEOUT_MS = 2_000;

/**
 * The composition root of `stream-janitor run`: builds the components in dependency order and
 * registers each one's teardown, so stop() takes them down in reverse (LIFO). It returns once
 * HTTP answers; waiting for Redis, the lease and the sweeps go on in the background, so a Redis
 * that is not there yet leaves the process alive, live and not ready.
 */
export async function startDaemon(
  config: JanitorConfig,
  dependencies: DaemonDependencies,
): Promise<RunningDaemon> {
  const { logger, version } = dependencies;
  const teardown = new TeardownStack(logger);
  try {
    const registry = new Registry();
    const metrics = createJanitorMetrics(registry, version);
    const connection = (name: string, commandTimeoutMs: number, failFast = false): RedisClient => {
      const client = connectRedis(config.redis, {
        connectionName: `stream-janitor:${name}`,
        commandTimeoutMs,
        logger,
        failFast,
      });
      teardown.push(`redis:${name}`, () => client.disconnect());
      return client;
    };
    const sweepRedis = registerScripts(connection("sweep", SWEEP_COMMAND_TIMEOUT_MS));
    const metricsRedis = connection("metrics", METRICS_COMMAND_TIMEOUT_MS);
    // Renewals must fail fast: a reply slower than one retry period is as good as none.
    const leaseRedis = connection("lease", Math.max(config.lease.retryPeriodMs, 50), true);

    const groups = config.groups.map(resolveGroup);
    // On Cluster the configuration was refused already (slotRule); elsewhere it is only a warning.
    for (const group of isCluster(config.redis) ? [] : groups) {
      const outside = keysOutsideSourceSlot(group);
      if (outside.length > 0) {
        logger.warn(
          { stream: group.stream, group: group.group, keys: outside },
          "keys outside the source's hash slot: fine on one server, CROSSSLOT on Redis Cluster",
        );
      }
    }
    const refresher = createScrapeRefresher({
      redis: metricsRedis,
      groups,
      metrics,
      logger,
      config,
    });
    teardown.push("metrics", () => refresher.stop());
    const http = await startHttpServer({
      ...config.http,
      registry,
      logger,
      beforeScrape: () => refresher.refresh(),
      isReady: () => refresher.ping(),
    });
    teardown.push("http", () => http.close());

    const bootController = new AbortController();
    const boot = (async () => {
      const capabilities = await waitForRedis(sweepRedis, logger, bootController.signal);
      logger.info({ capabilities, groups: groups.length }, "connected to redis");
      refresher.setCapabilities(capabilities);
      refresher.start();
      // Say at start-up, on every replica, which groups will be refused (each sweep re-checks).
      for (const group of groups) {
        const refusal = await checkRequeueTarget(sweepRedis, group).catch(() => undefined);
        if (refusal !== undefined)
          logger.error({ stream: group.stream, group: group.group }, refusal);
      }
      if (bootController.signal.aborted) return;
      const lease = new Lease({
        redis: leaseRedis,
        ...config.lease,
        logger,
        fencePerSlot: isCluster(config.redis),
      });
      const supervisor = new Supervisor({
        groups,
        redis: sweepRedis,
        logger,
        metrics,
        ...config.sweep,
        currentTerm: () => lease.term,
      });
      lease.on("acquired", (term) => {
        metrics.leader.set(1);
        metrics.fencingToken.set(term.fencingToken);
        supervisor.sweepSoon();
      });
      lease.on("lost", () => metrics.leader.set(0));
      // Pushed first, so it runs last: the sweep in flight ends before the lease is released.
      teardown.push("lease", () => lease.stop());
      teardown.push("supervisor", () => supervisor.stop());
      lease.start();
      supervisor.start();
    })();
    boot.catch((error: unknown) => {
      if (!bootController.signal.aborted) dependencies.onFatal(error);
    });
    teardown.push("boot", async () => {
      bootController.abort();
      await boot.catch(() => undefined);
    });
    return { httpUrl: http.url, stop: () => teardown.run() };
  } catch (error) {
    await teardown.run();
    throw error;
  }
}
