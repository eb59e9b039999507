import { describe, expect, it } from "vitest";
import { scrapePageWithinMs } from "../../src/scrape/GaugeReads.js";

describe("how soon a scrape in time is answered", () => {
  it("within metrics.scrapeReadWaitMs, unless the operator chose to wait for every read", () => {
    expect(scrapePageWithinMs({ scrapeReadWaitMs: 500, scrapeTimeoutMs: 10_000 })).toBe(500);
    expect(scrapePageWithinMs({ scrapeReadWaitMs: 10_000, scrapeTimeoutMs: 10_000 })).toBe(
      undefined,
    );
  });
});
