import { get as getHttp, type IncomingHttpHeaders } from "node:http";
import { get as getHttps } from "node:https";

/** A /status.json of 100,000 groups is about 30 MB: more than this is not a janitor's answer. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/**
 * One GET, its status and its body as text; rejects on a connection error, an abort (`signal`)
 * or a body over MAX_BODY_BYTES. node:http rather than fetch(): fetch refuses the ports of the
 * Fetch standard's "bad ports" list (6000, 6665-6669, ...), which an http.port may well be.
 */
export function httpGet(
  url: string,
  headers: IncomingHttpHeaders,
  signal: AbortSignal,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const get = url.startsWith("https:") ? getHttps : getHttp;
    const request = get(url, { headers, signal }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          request.destroy(new Error(`the answer is larger than ${MAX_BODY_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
      );
      response.on("error", reject);
    });
    request.on("error", reject);
  });
}
