import { describe, expect, it } from "vitest";
import { demoConfig } from "../../src/demo/demoConfig.js";
import { scrapePageWithinMs } from "../../src/scrape/GaugeReads.js";

describe("the demo's configuration", () => {
  it("has each scrape wait for its own read, so the final digest never shows the page written at start", () => {
    const { metrics } = demoConfig("redis://127.0.0.1:6379", 0);
    // A late read would otherwise be answered with the last kept page: on a loaded host the
    // final digest showed the start-up page (claimed 0, requeued 0, leader 0).
    expect(metrics.scrapeReadWaitMs).toBe(metrics.scrapeTimeoutMs);
    expect(scrapePageWithinMs(metrics)).toBeUndefined();
  });
});
