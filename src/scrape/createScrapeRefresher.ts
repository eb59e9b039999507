import type { Logger } from "pino";
import type { JanitorConfig } from "../core/configTypes.js";
import type { RedisCapabilities } from "../redis/detectCapabilities.js";
import type { RedisClient } from "../redis/RedisClient.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { applyGroupGauges, dropGroupGauges, SeriesLabels } from "./applyGroupGauges.js";
import { GroupStates } from "./GroupStates.js";
import type { JanitorMetrics } from "../metrics/janitorMetrics.js";
import { PelScanner, type PelScanResult } from "./PelScanner.js";
import { readGroupSnapshots } from "./readGroupSnapshots.js";
import { RedisUnavailableError, runPipeline } from "../redis/pipeline/runPipeline.js";
import { briefError } from "../redis/ConnectionProblems.js";
import { explainRedisError } from "../redis/explainRedisError.js";
import { lastConnectionError } from "../redis/lastConnectionError.js";

export interface ScrapeRefresherOptions {
  redis: RedisClient;
  groups: readonly ResolvedGroup[];
  metrics: JanitorMetrics;
  logger: Logger;
  config: JanitorConfig;
}

/** Keeps the gauges true to Redis: cheap reads at scrape time, PEL scans on their own cadence. */
export interface ScrapeRefresher {
  /** Before each scrape; never throws. */
  refresh(): Promise<void>;
  /** One round trip with a timeout; sets redis_up. */
  ping(): Promise<boolean>;
  setCapabilities(capabilities: RedisCapabilities): void;
  /** A new list of groups (reload, discovery): the next scrape reads it, and only it. */
  setGroups(groups: readonly ResolvedGroup[]): void;
  /** Starts background work (the PEL scans). */
  start(): void;
  stop(): Promise<void>;
  /** One PEL scan of every group, now (tests call it instead of waiting for the cadence). */
  scanOnce(signal: AbortSignal): Promise<void>;
  /**
   * A sweep changed this group (claimed, requeued, dead-lettered...): the PEL extremes of the
   * last scan may be gone. Drops them and rescans that group soon.
   */
  markChanged(groupId: string): void;
  /** Rescans the groups markChanged() named, now (tests await it instead of the timer). */
  rescanChanged(): Promise<void>;
  /** The PEL scans' latest results by group id: the group status counts due entries from them. */
  readonly pelScans: ReadonlyMap<string, PelScanResult>;
}

/** Readiness probes commonly time out after a second. */
const MAX_PING_TIMEOUT_MS = 1000;

export function createScrapeRefresher(options: ScrapeRefresherOptions): ScrapeRefresher {
  const { redis, metrics, config } = options;
  let { groups } = options;
  const log = options.logger.child({ component: "metrics" });
  const scanner = new PelScanner({
    redis,
    groups,
    logger: options.logger,
    intervalMs: config.metrics.pelScanIntervalMs,
  });
  const states = new GroupStates(log);
  const series = new SeriesLabels();
  let capabilities: RedisCapabilities | undefined;
  let inFlight: Promise<void> | undefined;
  let lastOutage = "";

  const markDown = (error: unknown): void => {
    // Dropped, not frozen: a dashboard must not show the last numbers of an unreachable Redis.
    dropGroupGauges(metrics);
    scanner.forget();
    if (!(error instanceof RedisUnavailableError)) {
      log.error({ err: error }, "metrics refresh failed; the gauges have no samples");
      return;
    }
    metrics.redisUp.set(0);
    // The cause the connection met (refused, WRONGPASS), not the pipeline's symptom ("no time",
    // "reconnecting"), in the operator's words and without a stack: one line per outage.
    const cause = lastConnectionError(redis) ?? error;
    const problem = explainRedisError(cause, { url: config.redis.url, client: redis });
    if (problem !== lastOutage) {
      log.warn({ err: briefError(error), problem }, "gauges dropped: the scrape cannot read Redis");
    }
    lastOutage = problem;
  };

  const refreshNow = async (): Promise<void> => {
    try {
      const snapshot = await readGroupSnapshots(redis, groups, {
        timeoutMs: config.metrics.scrapeTimeoutMs,
        perConsumer: config.metrics.perConsumer,
      });
      applyGroupGauges(
        metrics,
        snapshot,
        scanner.results,
        {
          perConsumer: config.metrics.perConsumer,
          maxConsumersPerGroup: config.metrics.maxConsumersPerGroup,
          groupLag: capabilities?.groupLag,
        },
        series,
      );
      metrics.redisUp.set(1);
      if (lastOutage !== "") log.info("redis answers again; gauges restored");
      lastOutage = "";
      states.record(snapshot.groups);
    } catch (error) {
      markDown(error);
    }
  };

  const ping = async (): Promise<boolean> => {
    const timeoutMs = Math.min(config.metrics.scrapeTimeoutMs, MAX_PING_TIMEOUT_MS);
    const up = await runPipeline(redis, [["PING"]], timeoutMs).then(
      ([reply]) => reply !== undefined && reply.error === undefined,
      () => false,
    );
    metrics.redisUp.set(up ? 1 : 0);
    return up;
  };

  return {
    // Concurrent scrapes (several Prometheus servers) share one read of Redis.
    refresh: () => {
      inFlight ??= refreshNow().finally(() => {
        inFlight = undefined;
      });
      return inFlight;
    },
    ping,
    setCapabilities: (detected) => {
      capabilities = detected;
    },
    setGroups: (next) => {
      groups = next;
      scanner.setGroups(next);
    },
    start: () => scanner.start(),
    stop: async () => {
      await scanner.stop();
      await inFlight;
    },
    scanOnce: (signal) => scanner.scanOnce(signal),
    markChanged: (groupId) => scanner.markChanged(groupId),
    rescanChanged: () => scanner.rescanChanged(),
    pelScans: scanner.results,
  };
}
