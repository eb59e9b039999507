import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventsIn } from "../support/eventsIn.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import {
  bearer,
  groupPath,
  leaderRound,
  startActionsServer,
  TOKENS,
  type ActionsServer,
  groupWithDeadLetters,
} from "./actionsSupport.js";

/**
 * A redrive task as a person runs it from the console, in Chromium with JavaScript off: started
 * from the group page's form, followed on the task page by reloading it, cancelled from there.
 * The leader's runner is driven by the test (one batch per round), so progress is deterministic.
 */
const fixture = useRedisServer();
/** The README's screenshots of a task in progress and of a find: rewritten only on request. */
const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === "1"
    ? new URL("./screenshots/", import.meta.url).pathname
    : join(tmpdir(), `sj-task-screenshots-${process.pid}`);
let server: ActionsServer;
let browser: Browser;

beforeAll(async () => {
  server = await startActionsServer(fixture.redis, fixture.server.url, uniquePrefix("b-tasks"));
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
  });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("redrive tasks in chromium", () => {
  it("with JavaScript off, alice starts a task of all on the group page, sees its progress on reload, cancels it; nothing lost or doubled; the audit names her", async () => {
    const group = await groupWithDeadLetters(fixture.redis, server, "b-task", 50);
    const { stream } = group;
    const context = await browser.newContext({
      viewport: { width: 1200, height: 800 },
      javaScriptEnabled: false,
      extraHTTPHeaders: { authorization: bearer(TOKENS.alice) },
    });
    const page = await context.newPage();
    await page.goto(`${server.http.url}${groupPath(group)}`);
    await page.fill('input[name="confirm"]', group.group);
    await page.click('button:has-text("redrive all as a task")');
    await expect(page.locator(".outcome").innerText()).resolves.toContain(
      "started by alice: 50 dead letter(s)",
    );
    await page.click("text=follow the task");
    expect(new URL(page.url()).pathname).toBe("/ui/task");
    await expect(page.locator("dl.facts").innerText()).resolves.toContain("0 of 50 (0%)");

    await leaderRound(server, fixture.redis, 10);
    await page.reload();
    await expect(page.locator("dl.facts").innerText()).resolves.toContain("10 of 50 (20%)");
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, "task.png") });
    const [deadId] =
      (await fixture.redis.xrange(group.deadLetterStream, "-", "+", "COUNT", 1))[0] ?? [];
    const find = await context.newPage();
    await find.goto(
      `${server.http.url}/ui/find?${new URLSearchParams({ stream, group: "billing", id: deadId ?? "" }).toString()}`,
    );
    await expect(find.locator("main").innerText()).resolves.toContain(`dead letter ${deadId}`);
    await find.screenshot({ path: join(SCREENSHOTS, "find.png") });
    await find.close();
    await page.click('button:has-text("cancel")');
    await expect(page.locator(".outcome").innerText()).resolves.toContain(": CANCELLING");
    await leaderRound(server, fixture.redis, 10);
    await page.goBack();
    await page.reload();
    await expect(page.locator("dl.facts").innerText()).resolves.toContain("CANCELLED");
    // Every dead letter is either moved once or still a dead letter.
    const moved = await fixture.redis.xlen(stream);
    expect(moved + (await fixture.redis.xlen(group.deadLetterStream))).toBe(50);
    const events = (await eventsIn(fixture.redis, server.eventsStream)).filter(
      (e) => e.type === "ui-action" && e.stream === stream,
    );
    expect(events.map((e) => e.by)).toEqual(["alice", "alice"]);
    await context.close();
  });
});
