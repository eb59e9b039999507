import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon, type RunningDaemon } from "../../src/daemon/startDaemon.js";
import { startDelayProxy, type DelayProxy } from "../support/delayProxy.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";

const fixture = useRedisServer();
const prefix = uniquePrefix("scrape-timeout");
const stream = `${prefix}:stream`;
let proxy: DelayProxy;
let daemon: RunningDaemon;

beforeAll(async () => {
  await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3));
  proxy = await startDelayProxy(fixture.server.port);
  const config = testConfig(`redis://127.0.0.1:${proxy.port}`, prefix, [{ action: "monitor" }], {
    metrics: {
      perConsumer: false,
      maxConsumersPerGroup: 50,
      pelScanIntervalMs: 3_600_000,
      // Well above the 2 s the metrics connection used to give every command, whatever this said.
      scrapeTimeoutMs: 8000,
      // The scrape waits for its own read: this test is about that read's bound.
      scrapeReadWaitMs: 8000,
    },
  });
  daemon = await startDaemon(config, {
    logger: pino({ level: "silent" }),
    version: "0.0.0-scrape-timeout",
    onFatal: () => undefined,
  });
});

afterAll(async () => {
  await daemon.stop();
  await proxy.close();
});

const pendingLine = `stream_janitor_pending_entries{stream="${stream}",group="workers"} 3`;

describe("the scrape's bound on its Redis reads", () => {
  it("is metrics.scrapeTimeoutMs: replies slower than 2 s still give the gauges", async () => {
    await waitFor(
      async () => (await (await fetch(`${daemon.httpUrl}/metrics`)).text()).includes(pendingLine),
      {
        what: "the gauges over a fast link",
      },
    );
    // 1.2 s each way: every reply of the scrape comes 2.4 s after its command.
    proxy.setDelay(1200);
    const text = await (await fetch(`${daemon.httpUrl}/metrics`)).text();
    proxy.setDelay(0);
    expect(text).toContain(pendingLine);
    expect(text).toMatch(/^stream_janitor_redis_up 1$/mu);
  });
});
