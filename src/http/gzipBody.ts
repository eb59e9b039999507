import type { IncomingMessage } from "node:http";
import { promisify } from "node:util";
import { constants, gzip } from "node:zlib";

const gzipAsync = promisify(gzip);

/**
 * Whether the client takes a gzip body (`Accept-Encoding: gzip`, not `gzip;q=0`). Prometheus asks
 * for it on every scrape: with thousands of groups the exposition is megabytes of text that
 * compresses about 25 times, and compressing costs less CPU than writing it uncompressed.
 */
export function acceptsGzip(request: IncomingMessage): boolean {
  const header = request.headers["accept-encoding"];
  if (header === undefined) return false;
  return header.split(",").some((part) => {
    const [coding = "", ...parameters] = part.split(";").map((token) => token.trim());
    if (coding.toLowerCase() !== "gzip" && coding !== "*") return false;
    const q = parameters.find((parameter) => parameter.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/** The body compressed off the event loop (zlib's thread pool), at the fastest level. */
export function gzipBody(body: string): Promise<Buffer> {
  return gzipAsync(body, { level: constants.Z_BEST_SPEED });
}
