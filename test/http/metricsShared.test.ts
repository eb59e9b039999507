import { get } from "node:http";
import { gunzipSync } from "node:zlib";
import { pino } from "pino";
import { Gauge } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpServer, type RunningHttpServer } from "../../src/http/createHttpServer.js";
import { JanitorRegistry } from "../../src/metrics/JanitorRegistry.js";

let http: RunningHttpServer;
const registry = new JanitorRegistry();
/** Times the registry read the gauge: once per rendering of the exposition. */
let renderings = 0;
/** Opens once both concurrent scrapes have reached the server (see the test). */
let releaseRefresh: () => void = () => undefined;
let refreshGate: Promise<void> = Promise.resolve();

beforeAll(async () => {
  new Gauge({
    name: "rendered",
    help: "h",
    registers: [registry],
    collect() {
      renderings += 1;
      this.set(renderings);
    },
  });
  http = await startHttpServer({
    host: "127.0.0.1",
    port: 0,
    registry,
    logger: pino({ level: "silent" }),
    beforeScrape: () => refreshGate,
    isReady: () => Promise.resolve(true),
  });
});
afterAll(() => http.close());

function scrape(headers: Record<string, string>) {
  return new Promise<string>((resolve, reject) => {
    get(`${http.url}/metrics`, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        const body = Buffer.concat(chunks);
        const gzipped = response.headers["content-encoding"] === "gzip";
        resolve((gzipped ? gunzipSync(body) : body).toString());
      });
      response.on("error", reject);
    }).on("error", reject);
  });
}

describe("/metrics under concurrent scrapes", () => {
  it("renders once for scrapes that arrive together, and each gets the whole text", async () => {
    refreshGate = new Promise((resolve) => {
      releaseRefresh = resolve;
    });
    let arrived = 0;
    const onRequest = (): void => {
      arrived += 1;
      // Both requests are in the server (the refresh of the first still running): let it end.
      if (arrived === 2) releaseRefresh();
    };
    http.server.on("request", onRequest);
    const before = renderings;
    const [zipped, plain] = await Promise.all([scrape({ "accept-encoding": "gzip" }), scrape({})]);
    http.server.off("request", onRequest);
    expect(renderings - before).toBe(1);
    expect(zipped).toBe(plain);
    expect(zipped).toBe(`# HELP rendered h\n# TYPE rendered gauge\nrendered ${renderings}\n`);
    // A later scrape renders again: nothing is cached beyond the scrapes in flight.
    await scrape({});
    expect(renderings - before).toBe(2);
  });
});
