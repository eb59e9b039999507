import type { ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import type { Registry } from "prom-client";
import { realTimers, type Timers } from "../core/timers.js";
import { withTimeout } from "../core/withTimeout.js";
import { PageRenderer } from "./PageRenderer.js";

/**
 * What the read before a scrape reports (ScrapeRefresher.refreshForScrape): `landed` when the
 * scrape stopped waiting for its read, which lands later.
 */
export interface ScrapeReadOutcome {
  readonly landed?: Promise<void>;
}

/** How soon a scrape is answered, and the timer that says so (tests inject theirs). */
export interface ScrapeAnswerLimits {
  /**
   * Asked as a scrape comes: a scrape whose read comes in time, but whose page is not written this
   * long after it asked, gets the last kept page (its own is kept when written). Undefined: it
   * waits for its page (no complete read shown yet, start or an outage, or the operator's choice).
   */
  readonly answerWithinMs?: () => number | undefined;
  readonly timers?: Timers;
}

/** The read's landing, when the refresh reported one (a refresh may report nothing). */
function landedOf(outcome: unknown): Promise<void> | undefined {
  const { landed } = (outcome ?? {}) as ScrapeReadOutcome;
  return landed instanceof Promise ? landed : undefined;
}

/** The scrape's answer, and the page written ahead when the gauges changed without a scrape. */
export interface Exposition {
  (): Promise<Buffer>;
  /**
   * A read no scrape asked for has landed (the start-up read, the read of a new list of groups):
   * its page is written now, after any rendering under way, and kept for the next scrape that
   * cannot wait. Resolves when it is kept (tests await it); never rejects.
   */
  prepare(): Promise<void>;
}

/**
 * One rendering for the scrapes that arrive together (several Prometheus servers, a dashboard,
 * a curl): a scrape that comes while one is refreshing and rendering gets that one's body, so
 * concurrent scrapes cost one rendering, not one each.
 *
 * A scrape that stopped waiting for its read (README "How gauges are read") is answered with the
 * page of the last complete read, if one is kept: rendering the text of tens of thousands of
 * groups takes about as long as the scrape was willing to wait, so a late read's page is rendered
 * when the read lands instead of while a scrape waits; a scrape that got its read in time renders
 * its own (or takes the one begun after its read landed), which is kept too. A page is also
 * written ahead when a read no scrape asked for lands (`prepare`), so the first scrape after
 * start or after a new list of groups need not write one. Each refresh is told how long the last
 * rendering took (`now`, a monotonic clock in ms), since a scrape that waits renders after it.
 * That is a forecast: a scrape in time whose page is still being written `limits.answerWithinMs`
 * after it asked gets the last kept page instead, unless it is the first to show a read.
 */
export function sharedExposition(
  refresh: (lastRenderMs: number) => Promise<unknown>,
  registry: Registry,
  now: () => number = () => performance.now(),
  limits: ScrapeAnswerLimits = {},
): Exposition {
  let inFlight: Promise<Buffer> | undefined;
  const pages = new PageRenderer(registry, now);
  /** A page that is not written in time gives way to the last kept one (if the scrape may). */
  const inTime = (page: Promise<Buffer>, askedAt: number, withinMs: number | undefined) => {
    const fallback = pages.kept;
    if (withinMs === undefined || fallback === undefined) return page;
    const timers = limits.timers ?? realTimers;
    return withTimeout(page, withinMs - (now() - askedAt), () => fallback, timers);
  };
  const answer = async (): Promise<Buffer> => {
    const askedAt = now();
    const withinMs = limits.answerWithinMs?.();
    const landed = landedOf(await refresh(pages.lastRenderMs));
    if (landed === undefined) {
      const page = pages.startedSince(askedAt) ?? pages.keep(pages.render());
      return inTime(page, askedAt, withinMs);
    }
    const ready = pages.kept;
    void pages.keep(landed.then(() => pages.render()));
    return ready ?? pages.underWay ?? pages.render();
  };
  const scrape = () => {
    inFlight ??= answer().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
  const prepare = async (): Promise<void> => {
    await pages.underWay?.catch(() => undefined);
    await pages.keep(pages.render()).catch(() => undefined);
  };
  return Object.assign(scrape, { prepare });
}

/**
 * Sends a gzip body to a client that does not take gzip: inflated as it goes out, so the text is
 * never whole in memory. A client that hangs up midway only ends its own answer.
 */
export async function sendInflated(
  response: ServerResponse,
  body: Buffer,
  contentType: string,
): Promise<void> {
  response.writeHead(200, {
    "content-type": contentType,
    "cache-control": "no-store",
    vary: "accept-encoding",
  });
  try {
    await pipeline(Readable.from([body]), createGunzip(), response);
  } catch (error) {
    if (!response.destroyed) throw error;
  }
}
