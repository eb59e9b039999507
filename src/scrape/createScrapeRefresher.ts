import { PelScanner } from "./PelScanner.js";
import type { PelScanResult } from "./scanGroupPel.js";
import type { RedisCapabilities } from "../redis/detectCapabilities.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { pingRedis } from "./pingRedis.js";
import { GaugeReads, type ScrapeRead, type ScrapeRefresherOptions } from "./GaugeReads.js";

export type { ScrapeRefresherOptions } from "./GaugeReads.js";

/** Keeps the gauges true to Redis: cheap reads at scrape time, PEL scans on their own cadence. */
export interface ScrapeRefresher {
  /** Reads Redis into the gauges (or joins the read under way) and waits for it; never throws. */
  refresh(): Promise<void>;
  /**
   * Before each scrape: refresh(), but once a read has completed, waited for at most
   * metrics.scrapeReadWaitMs less `lastRenderMs` (how long the page took to write last time,
   * which a scrape that waits spends after its read), and not at all when the last complete read
   * took longer than that; then the scrape is answered with the gauges of the last complete read,
   * and `landed` says when this one lands (for the next scrape). Never throws.
   */
  refreshForScrape(lastRenderMs?: number): Promise<ScrapeRead>;
  /** Whether the gauges show a complete read (false before the first, and after an outage). */
  readonly showsRead: boolean;
  /** How soon a scrape whose read comes in time is answered; undefined: when its page is written. */
  scrapeAnswerWithinMs(): number | undefined;
  /** One round trip with a timeout; sets redis_up. */
  ping(): Promise<boolean>;
  setCapabilities(capabilities: RedisCapabilities): void;
  /** A new list of groups (reload, discovery): the next scrape reads it, and only it. */
  setGroups(groups: readonly ResolvedGroup[]): void;
  /**
   * `listener` is called each time a read no scrape asked for (the start-up read, the read of a
   * new list of groups) has landed whole: the HTTP side writes the page ahead then.
   */
  onBackgroundRead(listener: () => void): void;
  /** Starts background work (the PEL scans), and a first read of the gauges. */
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

export function createScrapeRefresher(options: ScrapeRefresherOptions): ScrapeRefresher {
  const scanner = new PelScanner({
    redis: options.redis,
    groups: options.groups,
    logger: options.logger,
    intervalMs: options.config.metrics.pelScanIntervalMs,
  });
  const reads = new GaugeReads(options, scanner);
  const listeners: (() => void)[] = [];
  let started = false;
  const readInBackground = () => {
    void reads.refresh().then(() => {
      if (reads.showing) for (const listener of listeners) listener();
    });
  };
  return {
    refresh: () => reads.refresh(),
    refreshForScrape: (lastRenderMs) => reads.refreshForScrape(lastRenderMs),
    ping: () => pingRedis(options.redis, options.metrics, options.config),
    onBackgroundRead: (listener) => listeners.push(listener),
    get showsRead() {
      return reads.showing;
    },
    scrapeAnswerWithinMs: () => reads.answerWithinMs(),
    setCapabilities: (detected) => {
      reads.capabilities = detected;
    },
    setGroups: (next) => {
      reads.groups = next;
      scanner.setGroups(next);
      // Read the new groups now: the next scrape then has their numbers to show at once, if its
      // own read is late (README "How gauges are read").
      if (started) readInBackground();
    },
    start: () => {
      started = true;
      scanner.start();
      readInBackground();
    },
    stop: async () => {
      await scanner.stop();
      await reads.stop();
    },
    scanOnce: (signal) => scanner.scanOnce(signal),
    markChanged: (groupId) => scanner.markChanged(groupId),
    rescanChanged: () => scanner.rescanChanged(),
    pelScans: scanner.results,
  };
}
