import { get } from "node:http";
import { gunzipSync } from "node:zlib";
import { pino } from "pino";
import { Gauge } from "prom-client";
import { describe, expect, it } from "vitest";
import { startHttpServer } from "../../src/http/createHttpServer.js";
import { JanitorRegistry } from "../../src/metrics/JanitorRegistry.js";
import { waitFor } from "../support/waitFor.js";

function scrapeText(url: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    get(`${url}/metrics`, { headers: { "accept-encoding": "gzip" } }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve(gunzipSync(Buffer.concat(chunks)).toString()));
      response.on("error", reject);
    }).on("error", reject);
  });
}

describe("/metrics written ahead", () => {
  it("answers the first late scrape with the page written when the background read landed", async () => {
    const registry = new JanitorRegistry();
    let renderings = 0;
    let value = 1;
    new Gauge({
      name: "rendered",
      help: "which rendering",
      registers: [registry],
      collect() {
        renderings += 1;
        this.set(value);
      },
    });
    let writeAhead: () => void = () => undefined;
    const http = await startHttpServer({
      host: "127.0.0.1",
      port: 0,
      registry,
      logger: pino({ level: "silent" }),
      // Every scrape is late: its read lands after it is answered (a fleet of many groups).
      beforeScrape: () => Promise.resolve({ landed: new Promise<void>(() => undefined) }),
      writeAheadOn: (given) => {
        writeAhead = given;
      },
      isReady: () => Promise.resolve(true),
    });
    try {
      writeAhead();
      await waitFor(() => renderings === 1, { what: "the page written ahead" });
      // Gauges moved since: a late scrape shows the page written ahead, and renders nothing.
      value = 2;
      expect(await scrapeText(http.url)).toMatch(/^rendered 1$/mu);
      expect(renderings).toBe(1);
    } finally {
      await http.close();
    }
  });
});
