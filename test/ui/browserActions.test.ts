import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { chromium, type Browser, type BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JanitorConfig } from "../../src/core/configTypes.js";
import { resolveGroup, type ResolvedGroup } from "../../src/core/resolveGroup.js";
import { startDaemon, type RunningDaemon } from "../../src/daemon/startDaemon.js";
import { createUiActionRunner } from "../../src/operations/uiActionRunner.js";
import { addDeadLetters } from "../operator/deadLetterFixtures.js";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import { eventsIn } from "../support/eventsIn.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";

/**
 * The console's actions in a real browser (Debian's chromium, headless), against a real daemon
 * with roles: alice is an operator (basic auth, the browser's own login), the viewer has a
 * token. Each test its own group (and key prefix).
 */
const fixture = useRedisServer();
const prefix = uniquePrefix("browser-actions");
const VIEWPORT = { width: 1200, height: 800 };
const ALICE = { username: "alice", password: "alice-pw" };
const VIEWER_TOKEN = "viewer-token";

let dir: string;
let config: JanitorConfig;
let daemon: RunningDaemon;
let browser: Browser;
let origin: string;
/** A second origin, served by the test: a page whose form posts to the console. */
let foreign: Server;
let foreignUrl: string;
let foreignPage = "";

const groups = ["js-off", "cross-origin", "viewer"].map((name) => ({
  stream: `${prefix}:${name}`,
  group: "billing",
}));

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sj-ui-actions-"));
  const operators = join(dir, "operators");
  const viewers = join(dir, "viewers");
  await writeFile(operators, `${ALICE.username}:${ALICE.password}\n`);
  await writeFile(viewers, `viewer:${VIEWER_TOKEN}\n`);
  const base = testConfig(fixture.server.url, prefix, groups, {
    status: { intervalMs: 1000, window: 3, stuckAfterMs: 60_000 },
  });
  config = {
    ...base,
    http: {
      ...base.http,
      auth: {
        bearerTokenFile: "",
        basicAuthFile: "",
        roles: {
          operator: { bearerTokenFile: "", basicAuthFile: operators },
          viewer: { bearerTokenFile: viewers, basicAuthFile: "" },
        },
      },
      ui: { ...base.http.ui, actions: true },
    },
  };
  for (const group of config.groups) {
    await fixture.redis.xgroup("CREATE", group.stream, group.group, "$", "MKSTREAM");
    await addDeadLetters(fixture.redis, {
      stream: group.stream,
      group: group.group,
      deadLetterStream: resolveGroup(group).deadLetterStream,
      count: 3,
    });
  }
  daemon = await startDaemon(config, {
    logger: pino({ level: "silent" }),
    version: "0.0.0-browser",
    onFatal: () => undefined,
    uiActions: (redis) => createUiActionRunner(redis, config),
  });
  origin = new URL(daemon.httpUrl).origin;
  foreign = createServer((_request, response) => {
    response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    response.end(foreignPage);
  });
  await new Promise<void>((resolve) => foreign.listen(0, "127.0.0.1", resolve));
  foreignUrl = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}/`;
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
  });
});

afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
  await new Promise<void>((resolve) => (foreign ? foreign.close(() => resolve()) : resolve()));
  await rm(dir, { recursive: true, force: true });
});

function groupAt(index: number): ResolvedGroup {
  const group = config.groups[index];
  if (group === undefined) throw new Error("no group");
  return resolveGroup(group);
}

function pageUrl(group: ResolvedGroup): string {
  const query = new URLSearchParams({ stream: group.stream, group: group.group });
  return `${daemon.httpUrl}/ui/group?${query.toString()}`;
}

/** Alice's browser: the login the browser itself sends after the 401's Basic challenge. */
function asAlice(javaScriptEnabled = true): Promise<BrowserContext> {
  return browser.newContext({ viewport: VIEWPORT, javaScriptEnabled, httpCredentials: ALICE });
}

describe("console actions in chromium", () => {
  it("with JavaScript off, alice redrives a ticked dead letter, then purges all after typing the group's name; the audit names her", async () => {
    const group = groupAt(0);
    const context = await asAlice(false);
    const page = await context.newPage();
    await page.goto(pageUrl(group));
    const [first] = (await fixture.redis.xrange(group.deadLetterStream, "-", "+")).map(
      ([id]) => id,
    );
    await page.check(`input[type="checkbox"][value="${first}"]`);
    await page.click('button:has-text("redrive selected")');
    expect(new URL(page.url()).pathname).toBe("/ui/actions/redrive");
    await expect(page.locator(".outcome").innerText()).resolves.toContain(
      "redriven 1 dead letter(s)",
    );
    expect(await fixture.redis.xlen(group.stream)).toBe(1);
    // Back to the group page; "purge all" is refused until the name is typed.
    await page.click("text=back to the group");
    await page.fill('input[name="confirm"]', "not-the-name");
    await page.click('button:has-text("purge all")');
    await expect(page.locator(".outcome").innerText()).resolves.toContain("typed back exactly");
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(2);
    await page.goto(pageUrl(group));
    await page.fill('input[name="confirm"]', group.group);
    await page.click('button:has-text("purge all")');
    await expect(page.locator(".outcome").innerText()).resolves.toContain(
      "purged 2 dead letter(s)",
    );
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(0);
    // The audit: two ui-action events by alice, on the group page and from `events --type`.
    const events = (await eventsIn(fixture.redis, config.events.stream)).filter(
      (e) => e.type === "ui-action" && e.stream === group.stream,
    );
    expect(
      events.map((e) => [e.by, (JSON.parse(e.detail ?? "{}") as { action?: string }).action]),
    ).toEqual([
      ["alice", "redrive"],
      ["alice", "purge"],
    ]);
    await page.goto(pageUrl(group));
    await expect(page.locator("main").innerText()).resolves.toMatch(/ui-action\s+\d+\s+alice/u);
    const file = await writeConfigFile({
      redis: { url: fixture.server.url },
      events: { stream: config.events.stream },
    });
    try {
      const listed = await runCli(["events", "-c", file.path, "--type", "ui-action", "--json"]);
      const lines = listed.stdout.trim().split("\n");
      expect(lines.map((l) => (JSON.parse(l) as { by: string }).by)).toEqual(["alice", "alice"]);
    } finally {
      await file.remove();
    }
    await context.close();
  });

  it("a form on a second origin that posts to the console is refused, even with alice's login and a valid token", async () => {
    const group = groupAt(1);
    const context = await asAlice();
    const page = await context.newPage();
    await page.goto(pageUrl(group));
    const csrf = await page.locator('input[name="csrf"]').first().getAttribute("value");
    foreignPage = `<!doctype html><form method="post" action="${origin}/ui/actions/purge">
      <input type="hidden" name="csrf" value="${csrf ?? ""}">
      <input type="hidden" name="stream" value="${group.stream}">
      <input type="hidden" name="group" value="${group.group}">
      <input type="hidden" name="scope" value="all">
      <input type="hidden" name="confirm" value="${group.group}">
      <button type="submit">win a prize</button></form>`;
    await page.goto(foreignUrl);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().startsWith(`${origin}/ui/actions/`)),
      page.click("text=win a prize"),
    ]);
    expect(response.status()).toBe(403);
    await expect(page.locator("main").innerText()).resolves.toContain("not sent from this console");
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(3);
    await context.close();
  });

  it("a viewer sees no form, and a viewer's POST is refused", async () => {
    const group = groupAt(2);
    const context = await browser.newContext({
      viewport: VIEWPORT,
      extraHTTPHeaders: { authorization: `Bearer ${VIEWER_TOKEN}` },
    });
    const page = await context.newPage();
    await page.goto(`${pageUrl(group)}&pause=1`);
    await expect(page.locator("main").innerText()).resolves.toContain("x-original-id");
    await expect(page.locator('form[method="post"]').count()).resolves.toBe(0);
    await expect(page.locator('input[type="checkbox"]').count()).resolves.toBe(0);
    const response = await context.request.post(`${origin}/ui/actions/purge`, {
      headers: { origin },
      form: { csrf: "x", stream: group.stream, group: group.group, scope: "all" },
    });
    expect(response.status()).toBe(403);
    expect(await response.text()).toContain("Only an operator may act");
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(3);
    await context.close();
  });
});
