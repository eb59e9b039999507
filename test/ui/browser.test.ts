import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BAD_STATUSES, type StatusReport } from "../../src/core/groupStatus.js";
import { resolveGroup } from "../../src/core/resolveGroup.js";
import { startDaemon, type RunningDaemon } from "../../src/daemon/startDaemon.js";
import { pattern } from "../discovery/discoveryHarness.js";
import { addStuckEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";

/**
 * The web console in a real browser (Debian's chromium, headless, driven by playwright-core)
 * against a real daemon on a real Redis: one browser for the file, a few pages.
 */
const fixture = useRedisServer();
const prefix = uniquePrefix("browser");
const orders = `${prefix}:orders`;
const quiet = `${prefix}:quiet`;
const nasty = `${prefix}:<script>window.__pwned=1</script>`;
const nastyGroup = `"'&<b>x</b>`;
/** A group (found by discovery) and a consumer whose names are not UTF-8, made with Buffers. */
const binaryStream = `${prefix}:bin:s`;
const binaryGroup = Buffer.from([0x67, 0xc3, 0x28]);
const binaryConsumer = Buffer.from([0x63, 0xff, 0x3c, 0x62, 0x3e]);
/**
 * The README's screenshots: rewritten only on request (UPDATE_SCREENSHOTS=1), so that a test run
 * leaves the work tree clean; otherwise they go to a temporary folder and are checked there.
 */
const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === "1"
    ? new URL("./screenshots/", import.meta.url)
    : new URL(`file://${join(tmpdir(), `sj-screenshots-${process.pid}`)}/`);
const VIEWPORT = { width: 1200, height: 800 };

let daemon: RunningDaemon;
let browser: Browser;
let origin: string;
let stuckIds: string[];

beforeAll(async () => {
  const { redis } = fixture;
  const config = testConfig(
    fixture.server.url,
    prefix,
    [
      // Stuck entries that are not due yet (idle 30 min < minIdle 1 h), and poison entries
      // already delivered maxDeliveries times: the first sweep dead-letters those.
      { stream: orders, group: "billing", minIdleMs: 3_600_000, maxDeliveries: 5 },
      { stream: quiet, group: "workers" },
      { stream: nasty, group: nastyGroup },
    ],
    {
      status: { intervalMs: 100, window: 3, stuckAfterMs: 60_000 },
      discover: [pattern(`${prefix}:bin:*`)],
    },
  );
  stuckIds = await addStuckEntries(
    redis,
    orders,
    "billing",
    [
      ["order", "1"],
      ["order", "2"],
    ],
    {
      consumer: "worker-1",
      idleMs: 1_800_000,
      deliveries: 1,
    },
  );
  await addStuckEntries(redis, orders, "billing", [["order", "poison"]], {
    consumer: "worker-1",
    idleMs: 7_200_000,
    deliveries: 5,
  });
  await redis.xgroup("CREATE", quiet, "workers", "$", "MKSTREAM");
  await addStuckEntries(redis, nasty, nastyGroup, [["<b>body</b>", "1"]], {
    consumer: "<img src=x onerror=window.__pwned=2>",
  });
  await redis.xgroup("CREATECONSUMER", nasty, nastyGroup, binaryConsumer);
  await redis.xgroup("CREATE", binaryStream, binaryGroup, "$", "MKSTREAM");
  daemon = await startDaemon(config, {
    logger: pino({ level: "silent" }),
    version: "0.0.0-browser",
    onFatal: () => undefined,
  });
  origin = new URL(daemon.httpUrl).origin;
  await daemon.discoverOnce();
  const [first] = config.groups;
  if (first === undefined) throw new Error("no group configured");
  const deadLetters = resolveGroup(first).deadLetterStream;
  await waitFor(async () => (await redis.xlen(deadLetters)) === 1, { what: "the dead letter" });
  // Every group judged on a full window (UNKNOWN means fewer than 2 samples).
  await waitFor(
    async () => {
      const report = await statusJson();
      return report.groups.length >= 4 && report.groups.every((g) => g.status !== "UNKNOWN");
    },
    { what: "verdicts for every group", timeoutMs: 20_000 },
  );
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
  if (process.env.UPDATE_SCREENSHOTS !== "1")
    await rm(SCREENSHOTS, { recursive: true, force: true });
});

async function statusJson(): Promise<StatusReport> {
  return (await (await fetch(`${daemon.httpUrl}/status.json`)).json()) as StatusReport;
}

interface Watched {
  page: Page;
  context: BrowserContext;
  errors: string[];
  foreign: string[];
}

/** A page whose console errors and requests outside the daemon are recorded. */
async function watchedPage(javaScriptEnabled = true): Promise<Watched> {
  const context = await browser.newContext({ viewport: VIEWPORT, javaScriptEnabled });
  const page = await context.newPage();
  const errors: string[] = [];
  const foreign: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("request", (request) => {
    const url = new URL(request.url());
    if (url.protocol !== "data:" && url.origin !== origin) foreign.push(request.url());
  });
  return { page, context, errors, foreign };
}

/**
 * From a page that refreshes itself every second to the paused `url`: its refresh is cancelled
 * first (window.stop()), or on a busy machine it may fire in the middle of this navigation, which
 * Chromium then aborts (net::ERR_ABORTED).
 */
async function gotoPaused(page: Page, url: string): Promise<void> {
  await page.evaluate(() => (globalThis as unknown as { stop(): void }).stop());
  await page.goto(url);
}

async function isPngOfViewport(path: URL): Promise<void> {
  const png = await readFile(path);
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  // IHDR: width and height, big-endian, right after the chunk header.
  expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([VIEWPORT.width, VIEWPORT.height]);
  expect(png.length).toBeGreaterThan(5_000);
}

describe("the web console in chromium", () => {
  it("lists every group with the status /status.json gives it; no errors, nothing from outside, no script runs", async () => {
    const { page, context, errors, foreign } = await watchedPage();
    type Row = { status?: string; stream?: string; group?: string };
    const key = (row: Row): string => JSON.stringify([row.status, row.stream, row.group]);
    // Verdicts move with every sample (100 ms here): the page and /status.json are compared
    // when no sample fell between the two reads. A browser's page load can outlast a sample on a
    // busy machine, so the page's HTML is read over HTTP between the two, and chromium is then
    // given exactly that page (served at its own address, its style sheet from the daemon).
    const overview = `${daemon.httpUrl}/ui?pause=1`;
    let html = "";
    let report: StatusReport | undefined;
    await waitFor(
      async () => {
        const before = await statusJson();
        html = await (await fetch(overview)).text();
        report = await statusJson();
        return before.generatedAt === report.generatedAt;
      },
      { what: "a page and /status.json of the same sample", timeoutMs: 30_000 },
    );
    if (report === undefined) throw new Error("no report");
    await page.route(overview, (route) => route.fulfill({ body: html, contentType: "text/html" }));
    await page.goto(overview);
    await page.unroute(overview);
    const rows: Row[] = [];
    for (const row of await page.locator("tbody tr").all()) {
      const [status, stream, group] = await row.locator("td").allInnerTexts();
      rows.push({ status: status?.trim(), stream: stream?.trim(), group: group?.trim() });
    }
    const { groups } = report;
    expect(rows.map(key).sort()).toEqual(
      groups.map((g) => key({ status: g.status, stream: g.stream, group: g.group })).sort(),
    );
    const status = (stream: string): string | undefined =>
      groups.find((g) => g.stream === stream)?.status;
    expect(BAD_STATUSES).toContain(status(orders));
    expect(status(quiet)).toBe("OK");
    // The discovered group whose name is not UTF-8 is listed too (decoded for display).
    expect(rows.some((row) => row.stream === binaryStream)).toBe(true);
    // The names show as text: escaped, never run.
    await expect(page.getByText(nasty).first().isVisible()).resolves.toBe(true);
    expect(
      await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned),
    ).toBeUndefined();
    // Filter and sort by plain GET links and forms.
    await page.fill('input[name="q"]', "quiet");
    await page.click('button[type="submit"]');
    await expect(page.locator("tbody tr").count()).resolves.toBe(1);
    expect(new URL(page.url()).searchParams.get("pause")).toBe("1");
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.goto(`${daemon.httpUrl}/ui?pause=1`);
    await page.screenshot({ path: new URL("overview.png", SCREENSHOTS).pathname });
    await isPngOfViewport(new URL("overview.png", SCREENSHOTS));
    // On a phone the page itself does not scroll sideways: only the table does, inside its box.
    await page.setViewportSize({ width: 390, height: 844 });
    const widths = await page.evaluate(() => {
      const root = (
        globalThis as unknown as {
          document: { documentElement: { scrollWidth: number; clientWidth: number } };
        }
      ).document.documentElement;
      return [root.scrollWidth, root.clientWidth];
    });
    expect(widths[0]).toBeLessThanOrEqual(widths[1] ?? 0);
    expect(errors).toEqual([]);
    expect(foreign).toEqual([]);
    await context.close();
  });

  it("a group page shows the stuck entries and the dead letter", async () => {
    const { page, context, errors, foreign } = await watchedPage();
    await page.goto(`${daemon.httpUrl}/ui?pause=1`);
    await page.getByRole("link", { name: orders }).click();
    expect(new URL(page.url()).pathname).toBe("/ui/group");
    // Read on the paused page: the linked one refreshes itself every second, and a busy machine
    // may be in the middle of that reload while reading.
    await gotoPaused(page, `${page.url()}&pause=1`);
    const text = await page.locator("main").innerText();
    for (const id of stuckIds) expect(text).toContain(id);
    expect(text).toContain("worker-1");
    expect(text).toMatch(/max-deliveries\s*\(1\)/u);
    expect(text).toContain("stream-janitor dlq redrive --stream");
    await page.screenshot({ path: new URL("group.png", SCREENSHOTS).pathname });
    await isPngOfViewport(new URL("group.png", SCREENSHOTS));
    // The nasty group's page: names and consumer escaped, nothing runs.
    await page.goto(`${daemon.httpUrl}/ui?pause=1`);
    await page.getByRole("link", { name: nastyGroup }).click();
    await gotoPaused(page, `${page.url()}&pause=1`);
    await expect(page.getByText("<img src=x onerror=window.__pwned=2>").isVisible()).resolves.toBe(
      true,
    );
    // The consumer whose name is not UTF-8: shown decoded, its markup as text.
    await expect(page.getByText("c\uFFFD<b>").isVisible()).resolves.toBe(true);
    expect(
      await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned),
    ).toBeUndefined();
    await page.goto(`${daemon.httpUrl}/ui/sweeper`);
    await expect(page.locator("main").innerText()).resolves.toContain("leader (fencing token");
    await page.screenshot({ path: new URL("sweeper.png", SCREENSHOTS).pathname });
    expect(errors).toEqual([]);
    expect(foreign).toEqual([]);
    await context.close();
  });

  it("works with JavaScript off: sorting by a header link", async () => {
    const { page, context, errors } = await watchedPage(false);
    // Paused: a page that refreshes itself every second may be reloading while its rows are
    // counted on a busy machine. The sort link keeps the pause.
    await page.goto(`${daemon.httpUrl}/ui?pause=1`);
    await page.getByRole("link", { name: "pending", exact: true }).click();
    expect(new URL(page.url()).searchParams.get("sort")).toBe("pending");
    expect(new URL(page.url()).searchParams.get("pause")).toBe("1");
    await expect(page.locator("tbody tr").count()).resolves.toBeGreaterThanOrEqual(4);
    expect(errors).toEqual([]);
    await context.close();
  });

  it("behind http.auth: refused without the token (nothing of the groups shown), served with it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sj-ui-auth-"));
    const tokenFile = join(dir, "token");
    await writeFile(tokenFile, "console-token\n");
    const base = testConfig(fixture.server.url, prefix, [{ stream: quiet, group: "workers" }], {
      status: { intervalMs: 100, window: 3, stuckAfterMs: 60_000 },
    });
    // The same lease key: this second daemon is a standby beside the first.
    const guarded = await startDaemon(
      {
        ...base,
        lease: { ...base.lease, key: `${prefix}:lease` },
        http: { ...base.http, auth: { bearerTokenFile: tokenFile, basicAuthFile: "" } },
      },
      { logger: pino({ level: "silent" }), version: "0.0.0-browser", onFatal: () => undefined },
    );
    try {
      await waitFor(
        async () => {
          const response = await fetch(`${guarded.httpUrl}/status.json`, {
            headers: { authorization: "Bearer console-token" },
          });
          const report = (await response.json()) as StatusReport;
          return report.groups.some((group) => group.stream === quiet);
        },
        { what: "the guarded daemon's first sample" },
      );
      const refused = await browser.newContext({ viewport: VIEWPORT });
      const page = await refused.newPage();
      for (const path of ["/ui", "/ui/group?stream=x&group=y", "/ui/sweeper", "/ui/style.css"]) {
        const response = await page.goto(`${guarded.httpUrl}${path}`);
        expect(response?.status()).toBe(401);
        expect(await page.content()).not.toContain(quiet);
      }
      await refused.close();
      const allowed = await browser.newContext({
        viewport: VIEWPORT,
        extraHTTPHeaders: { authorization: "Bearer console-token" },
      });
      const served = await allowed.newPage();
      const response = await served.goto(`${guarded.httpUrl}/ui?pause=1`);
      expect(response?.status()).toBe(200);
      await expect(served.locator("main").innerText()).resolves.toContain(quiet);
      await allowed.close();
    } finally {
      await guarded.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
