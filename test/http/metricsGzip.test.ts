import { get } from "node:http";
import { gunzipSync } from "node:zlib";
import { pino } from "pino";
import { Gauge, Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpServer, type RunningHttpServer } from "../../src/http/createHttpServer.js";

let http: RunningHttpServer;
const registry = new Registry();

beforeAll(async () => {
  const gauge = new Gauge({ name: "g", help: "h", labelNames: ["stream"], registers: [registry] });
  for (let i = 0; i < 500; i += 1) gauge.set({ stream: `tenant:${i}:events` }, i);
  http = await startHttpServer({
    host: "127.0.0.1",
    port: 0,
    registry,
    logger: pino({ level: "silent" }),
    beforeScrape: () => Promise.resolve(),
    isReady: () => Promise.resolve(true),
  });
});
afterAll(() => http.close());

/** GET /metrics with these request headers: the raw body, undecoded, and the response headers. */
function scrape(headers: Record<string, string>) {
  return new Promise<{ body: Buffer; headers: Record<string, unknown> }>((resolve, reject) => {
    get(`${http.url}/metrics`, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ body: Buffer.concat(chunks), headers: response.headers }));
      response.on("error", reject);
    }).on("error", reject);
  });
}

describe("/metrics compression", () => {
  it("answers gzip to a client that asks for it (Prometheus does), the same text once inflated", async () => {
    const expected = await registry.metrics();
    const plain = await scrape({});
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body.toString()).toBe(expected);
    const zipped = await scrape({ "accept-encoding": "gzip" });
    expect(zipped.headers["content-encoding"]).toBe("gzip");
    expect(zipped.headers.vary).toBe("accept-encoding");
    expect(zipped.body.length).toBeLessThan(plain.body.length / 4);
    expect(gunzipSync(zipped.body).toString()).toBe(expected);
    const prometheus = await scrape({
      "accept-encoding": "gzip",
      accept: "text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
    });
    expect(gunzipSync(prometheus.body).toString()).toBe(expected);
  });

  it("sends plain text when gzip is refused or not offered", async () => {
    for (const header of ["gzip;q=0", "identity", "deflate, br"]) {
      const response = await scrape({ "accept-encoding": header });
      expect(response.headers["content-encoding"]).toBeUndefined();
      expect(response.body.toString()).toBe(await registry.metrics());
    }
  });
});
