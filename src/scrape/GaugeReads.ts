import type { Logger } from "pino";
import type { JanitorConfig } from "../core/configTypes.js";
import type { RedisCapabilities } from "../redis/detectCapabilities.js";
import type { RedisClient } from "../redis/RedisClient.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import { applyGroupGauges, dropGroupGauges, SeriesLabels } from "./applyGroupGauges.js";
import { GroupStates } from "./GroupStates.js";
import type { JanitorMetrics } from "../metrics/janitorMetrics.js";
import type { PelScanner } from "./PelScanner.js";
import { readGroupSnapshots } from "./readGroupSnapshots.js";
import { RedisUnavailableError } from "../redis/pipeline/runPipeline.js";
import { briefError } from "../redis/ConnectionProblems.js";
import { explainRedisError } from "../redis/explainRedisError.js";
import { lastConnectionError } from "../redis/lastConnectionError.js";
import { backgroundTimers, type Timers } from "../core/timers.js";
import { withTimeout } from "../core/withTimeout.js";

export interface ScrapeRefresherOptions {
  redis: RedisClient;
  groups: readonly ResolvedGroup[];
  metrics: JanitorMetrics;
  logger: Logger;
  config: JanitorConfig;
  /** The timer of a scrape's wait for its read; tests inject theirs. */
  timers?: Timers;
  /** Monotonic clock in ms that times each read; performance.now() unless a test injects one. */
  now?: () => number;
}

/** How a scrape's read went: `landed` only when the scrape stopped waiting for it. */
export interface ScrapeRead {
  readonly landed?: Promise<void>;
}

/**
 * How soon a scrape whose read came in time is answered (ms from its ask): within the wait, or
 * with the page of the last complete read if its own is not written by then. Undefined when the
 * operator chose to wait as long as a read may take (README "How gauges are read").
 */
export function scrapePageWithinMs(
  metrics: Pick<JanitorConfig["metrics"], "scrapeReadWaitMs" | "scrapeTimeoutMs">,
): number | undefined {
  const waitMs = metrics.scrapeReadWaitMs;
  return waitMs >= metrics.scrapeTimeoutMs ? undefined : waitMs;
}

/**
 * Reads of the per-group gauges: one at a time (concurrent scrapes share it), each applied whole
 * to the gauges when it completes. A read of tens of thousands of groups takes longer than a
 * scrape should wait: how long it waits is in README "How gauges are read".
 */
export class GaugeReads {
  groups: readonly ResolvedGroup[];
  capabilities: RedisCapabilities | undefined;
  private inFlight: Promise<void> | undefined;
  private lastOutage = "";
  /** Whether the gauges show a complete read (false before the first, and after an outage). */
  private showingRead = false;
  /** How long the last complete read took (ms); a scrape does not wait for one slower than its wait. */
  private lastReadMs = 0;
  private readonly states: GroupStates;
  private readonly series = new SeriesLabels();
  private readonly log: Logger;
  private readonly timers: Timers;
  private readonly now: () => number;

  constructor(
    private readonly options: ScrapeRefresherOptions,
    private readonly scanner: PelScanner,
  ) {
    this.groups = options.groups;
    this.log = options.logger.child({ component: "metrics" });
    this.states = new GroupStates(this.log);
    this.timers = options.timers ?? backgroundTimers;
    this.now = options.now ?? (() => performance.now());
  }

  /** Concurrent scrapes (several Prometheus servers) share one read of Redis. */
  refresh(): Promise<void> {
    this.inFlight ??= this.readNow().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  /** Whether the gauges show a complete read (the last read landed whole). */
  get showing(): boolean {
    return this.showingRead;
  }

  /**
   * How soon a scrape whose read comes in time is answered (scrapePageWithinMs), once a complete
   * read is shown: before it (start, or after an outage) a scrape waits for its own read, as
   * refreshForScrape does, and for its page, however long that takes.
   */
  answerWithinMs(): number | undefined {
    return this.showingRead ? scrapePageWithinMs(this.options.config.metrics) : undefined;
  }

  async refreshForScrape(lastRenderMs = 0): Promise<ScrapeRead> {
    const { metrics, config } = this.options;
    const read = this.refresh();
    if (!this.showingRead) {
      await read;
      return {};
    }
    const waitMs = config.metrics.scrapeReadWaitMs;
    // The page is written after the read: a scrape waits for its read only as long as leaves
    // time to write it within the wait. A fleet whose read and page outlast the wait (tens of
    // thousands of groups) would be answered late anyway: waiting would only add the wait to
    // every scrape, unless the operator chose to wait as long as a read may take
    // (README "How gauges are read").
    const alwaysWait = scrapePageWithinMs(config.metrics) === undefined;
    const readWaitMs = alwaysWait ? waitMs : waitMs - lastRenderMs;
    if (!alwaysWait && (readWaitMs <= 0 || this.lastReadMs > readWaitMs)) {
      metrics.scrapeLateReads.inc();
      return { landed: read };
    }
    const late = await withTimeout(
      read.then(() => false),
      readWaitMs,
      () => true,
      this.timers,
    );
    if (!late) return {};
    metrics.scrapeLateReads.inc();
    return { landed: read };
  }

  async stop(): Promise<void> {
    await this.inFlight;
  }

  private async readNow(): Promise<void> {
    const { redis, metrics, config } = this.options;
    const startedAt = this.now();
    try {
      const snapshot = await readGroupSnapshots(redis, this.groups, {
        timeoutMs: config.metrics.scrapeTimeoutMs,
        perConsumer: config.metrics.perConsumer,
      });
      applyGroupGauges(
        metrics,
        snapshot,
        this.scanner.results,
        {
          perConsumer: config.metrics.perConsumer,
          maxConsumersPerGroup: config.metrics.maxConsumersPerGroup,
          groupLag: this.capabilities?.groupLag,
        },
        this.series,
      );
      this.showingRead = true;
      this.lastReadMs = this.now() - startedAt;
      metrics.scrapeReadTimestamp.set(snapshot.nowMs / 1000);
      metrics.redisUp.set(1);
      if (this.lastOutage !== "") this.log.info("redis answers again; gauges restored");
      this.lastOutage = "";
      this.states.record(snapshot.groups);
    } catch (error) {
      this.markDown(error);
    }
  }

  private markDown(error: unknown): void {
    const { redis, metrics, config } = this.options;
    // Dropped, not frozen: a dashboard must not show the last numbers of an unreachable Redis.
    dropGroupGauges(metrics);
    this.showingRead = false;
    metrics.scrapeReadTimestamp.reset();
    this.scanner.forget();
    if (!(error instanceof RedisUnavailableError)) {
      this.log.error({ err: error }, "metrics refresh failed; the gauges have no samples");
      return;
    }
    metrics.redisUp.set(0);
    // The cause the connection met (refused, WRONGPASS), not the pipeline's symptom ("no time",
    // "reconnecting"), in the operator's words and without a stack: one line per outage.
    const cause = lastConnectionError(redis) ?? error;
    const problem = explainRedisError(cause, { url: config.redis.url, client: redis });
    if (problem !== this.lastOutage) {
      this.log.warn(
        { err: briefError(error), problem },
        "gauges dropped: the scrape cannot read Redis",
      );
    }
    this.lastOutage = problem;
  }
}
