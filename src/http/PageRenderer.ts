import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { constants, createGzip } from "node:zlib";
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

/** A rendering under way, and when it started (the `now` clock). */
interface Rendering {
  readonly startedAt: number;
  readonly body: Promise<Buffer>;
}

/**
 * The pages of one registry: each rendering timed on `now` (a monotonic clock in ms), the one under
 * way, and the last one kept (the page of the last complete read, see sharedExposition).
 */
export class PageRenderer {
  /** How long the last rendering took (ms; 0 before the first). */
  lastRenderMs = 0;
  /** The last page kept, once rendered; a failed rendering leaves the one before it. */
  kept: Promise<Buffer> | undefined;
  private current: Rendering | undefined;

  constructor(
    private readonly registry: Registry,
    private readonly now: () => number,
  ) {}

  /** The body of the rendering under way, if any. */
  get underWay(): Promise<Buffer> | undefined {
    return this.current?.body;
  }

  /** The rendering under way if it began at `since` or later (after a read that landed then). */
  startedSince(since: number): Promise<Buffer> | undefined {
    const rendering = this.current;
    return rendering !== undefined && rendering.startedAt >= since ? rendering.body : undefined;
  }

  render(): Promise<Buffer> {
    const startedAt = this.now();
    const body = compress(this.registry).then((page) => {
      this.lastRenderMs = this.now() - startedAt;
      return page;
    });
    const rendering = { startedAt, body };
    this.current = rendering;
    const done = () => {
      if (this.current === rendering) this.current = undefined;
    };
    body.then(done, done);
    return body;
  }

  /** Keeps `next` as the page once it is rendered. */
  keep(next: Promise<Buffer>): Promise<Buffer> {
    next.then(
      () => {
        this.kept = next;
      },
      () => undefined,
    );
    return next;
  }
}
