import type { Logger } from "pino";
import type { JanitorConfig } from "../config/types.js";
import type { RedisCapabilities } from "../redis/detectCapabilities.js";
import type { RedisClient } from "../redis/scriptedRedis.js";
import type { ResolvedGroup } from "../sweep/resolveGroup.js";
import type { JanitorMetrics } from "./janitorMetrics.js";

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
  /** Starts background work (the PEL scans). */
  start(): void;
  stop(): Promise<void>;
}

const PING_TIMEOUT_MS = 1000;

export function createScrapeRefresher(options: ScrapeRefresherOptions): ScrapeRefresher {
  const { redis, metrics } = options;
  const ping = async (): Promise<boolean> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
    });
    const answered = redis.ping().then(
      () => true,
      () => false,
    );
    const up = await Promise.race([answered, timeout]);
    clearTimeout(timer);
    metrics.redisUp.set(up ? 1 : 0);
    return up;
  };
  return {
    refresh: async () => {
      await ping();
    },
    ping,
    setCapabilities: () => undefined,
    start: () => undefined,
    stop: () => Promise.resolve(),
  };
}
