import type { ServerResponse } from "node:http";
import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { constants, createGunzip, createGzip } from "node:zlib";
import type { Registry } from "prom-client";

/** A registry that can give its text in chunks (JanitorRegistry); any other gives it whole. */
interface PiecewiseRegistry {
  chunks?: () => AsyncIterable<Buffer>;
}

async function* piecesOf(registry: Registry): AsyncGenerator<Buffer | string> {
  const { chunks } = registry as unknown as PiecewiseRegistry;
  if (typeof chunks === "function") {
    for await (const chunk of chunks.call(registry)) if (chunk.length > 0) yield chunk;
    return;
  }
  yield await registry.metrics();
}

/**
 * The exposition compressed piece by piece as the registry writes it (zlib's thread pool works
 * while the next piece is formatted): what is held is the compressed body, about a 25th of the
 * text (1 MB for a leader of 10,000 groups), never the whole text.
 */
async function compress(registry: Registry): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const collect = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  // Two pieces ahead at most: the text waiting for zlib stays a few hundred KB.
  const source = Readable.from(piecesOf(registry), { objectMode: true, highWaterMark: 2 });
  await pipeline(source, createGzip({ level: constants.Z_BEST_SPEED }), collect);
  return Buffer.concat(chunks);
}

/**
 * What the read before a scrape reports (ScrapeRefresher.refreshForScrape): `landed` when the
 * scrape stopped waiting for its read, which lands later.
 */
export interface ScrapeReadOutcome {
  readonly landed?: Promise<void>;
}

/** The read's landing, when the refresh reported one (a refresh may report nothing). */
function landedOf(outcome: unknown): Promise<void> | undefined {
  const { landed } = (outcome ?? {}) as ScrapeReadOutcome;
  return landed instanceof Promise ? landed : undefined;
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
 * its own, which is kept too. Each refresh is told how long the last rendering took (`now`, a
 * monotonic clock in ms), since a scrape that waits for its read renders after it.
 */
export function sharedExposition(
  refresh: (lastRenderMs: number) => Promise<unknown>,
  registry: Registry,
  now: () => number = () => performance.now(),
): () => Promise<Buffer> {
  let inFlight: Promise<Buffer> | undefined;
  let prepared: Promise<Buffer> | undefined;
  let lastRenderMs = 0;
  const render = async (): Promise<Buffer> => {
    const startedAt = now();
    const body = await compress(registry);
    lastRenderMs = now() - startedAt;
    return body;
  };
  /** Keeps a body once rendered; a failed rendering leaves the one before it. */
  const keep = (next: Promise<Buffer>): Promise<Buffer> => {
    next.then(
      () => {
        prepared = next;
      },
      () => undefined,
    );
    return next;
  };
  const answer = async (): Promise<Buffer> => {
    const landed = landedOf(await refresh(lastRenderMs));
    if (landed === undefined) return keep(render());
    const ready = prepared;
    void keep(landed.then(render));
    return ready ?? render();
  };
  return () => {
    inFlight ??= answer().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
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
