import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GroupSet } from "../../src/core/GroupSet.js";
import type { StatusBoard } from "../../src/core/groupStatus.js";
import { resolveGroup } from "../../src/core/resolveGroup.js";
import type { RunningHttpServer } from "../../src/http/createHttpServer.js";
import { startRouteServer } from "../support/startRouteServer.js";
import { GroupHistory } from "../../src/status/GroupHistory.js";
import { createConsoleRoute } from "../../src/ui/createConsole.js";
import { SweepLog } from "../../src/ui/SweepLog.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { fabricatedGroup, fabricatedReport } from "./fabricatedReport.js";

/**
 * The history's SVG in Chromium with JavaScript off and the dark theme asked for: the sparkline
 * and the charts are drawn (their lines have a size), in the dark theme's colour, with their text
 * alternative as the accessible name, without an error (the CSP refuses inline style and script)
 * and without a request anywhere else. The points are fabricated (README "Web console").
 */
const fixture = useRedisServer();
const prefix = uniquePrefix("history-browser");
const stream = `${prefix}:orders`;
let http: RunningHttpServer;
let browser: Browser;

beforeAll(async () => {
  const config = testConfig(fixture.server.url, prefix, [{ stream, group: "billing" }]);
  const groups = config.groups.map(resolveGroup);
  await fixture.redis.xgroup("CREATE", stream, "billing", "$", "MKSTREAM");
  const report = fabricatedReport([fabricatedGroup(stream, "billing", "OK", { lag: 40 })]);
  const history = new GroupHistory(60);
  for (let m = 0; m < 60; m += 1) {
    const atMs = report.generatedAt - (59 - m) * 60_000;
    const sample = { lag: m * 2, pending: m, due: 0, deadLetters: 1, retryLane: null };
    const activity = { entriesRead: 1, consumerCount: 1, minConsumerIdleMs: 1 };
    const read = { readable: true as const, atMs, oldestPendingIdleMs: 0, lastDeliveredId: "1-0" };
    history.recordSample(`${stream}/billing`, { ...read, ...sample, ...activity }, true);
  }
  const board: StatusBoard = { report: () => report, statusOf: () => report.groups[0] };
  http = await startRouteServer([
    createConsoleRoute({
      board,
      sweeps: new SweepLog(),
      groups: new GroupSet(groups),
      redis: fixture.server.client(),
      config,
      history,
    }),
  ]);
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
  });
});

afterAll(async () => {
  await browser?.close();
  await http?.close();
});

describe("the history in chromium", () => {
  it("draws the sparkline and the charts, dark, named in words, with no script and nothing from outside", async () => {
    const context = await browser.newContext({ javaScriptEnabled: false, colorScheme: "dark" });
    const page = await context.newPage();
    const errors: string[] = [];
    const foreign: string[] = [];
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    page.on("request", (request) => {
      if (!request.url().startsWith(http.url) && !request.url().startsWith("data:")) {
        foreign.push(request.url());
      }
    });
    try {
      await page.goto(`${http.url}/ui?pause=1`);
      // The <title> is the image's accessible name.
      const spark = page.getByRole("img", { name: "lag 118, rising from 0 over 60 min" });
      await expect(spark.getAttribute("class")).resolves.toBe("spark");
      const line = spark.locator("path");
      const box = await line.boundingBox();
      expect(box?.width).toBeGreaterThan(30);
      expect(box?.height).toBeGreaterThan(10);
      // The dark theme's --link (#7db4f0), from the stylesheet: no inline style.
      await expect(
        line.evaluate((el) => {
          const view = globalThis as unknown as {
            getComputedStyle(e: unknown): { stroke: string };
          };
          return view.getComputedStyle(el).stroke;
        }),
      ).resolves.toBe("rgb(125, 180, 240)");
      await page.goto(
        `${http.url}/ui/group?stream=${encodeURIComponent(stream)}&group=billing&pause=1`,
      );
      const charts = page.locator("figure.chart svg");
      await expect(charts.count()).resolves.toBe(7);
      const pending = page.locator("figure.chart", { hasText: "pending 59, rising from 0" });
      const chartLine = pending.locator("path.line");
      expect((await chartLine.boundingBox())?.width).toBeGreaterThan(100);
      await expect(pending.locator("svg").getAttribute("role")).resolves.toBe("img");
      expect(errors).toEqual([]);
      expect(foreign).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
