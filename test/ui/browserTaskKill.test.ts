import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { JanitorConfig } from "../../src/core/configTypes.js";
import { addDeadLetters } from "../operator/deadLetterFixtures.js";
import { basic } from "../support/authRequest.js";
import { DaemonProcess, writeConfigFile } from "../support/daemonProcess.js";
import { eventsIn } from "../support/eventsIn.js";
import { expectExactlyOnce } from "../support/expectExactlyOnce.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";

/**
 * Issue 34's "a leader kill -9 in the middle neither loses nor doubles an entry", as a person sees
 * it: two `stream-janitor run` processes with the console acting (README "Operating"), alice in
 * Chromium with JavaScript off on the standby's console (so her browser outlives the kill), a
 * redrive task of all started there and followed on its page by reloading it. The leader is
 * killed once the page shows progress; the standby wins the lease (testConfig's 1.5 s lease) and
 * resumes the task from its position in Redis.
 */
const fixture = useRedisServer();
const ALICE = { username: "alice", password: "alice-pw" };
/**
 * The console's tasks move at most 1,000 a second (uiTaskActions.ts): at least 3 s of work, so the
 * reload that first shows progress comes well before the end (the kill checks it still RUNNING).
 */
const DEAD_LETTERS = 3000;
/**
 * Bounds waits on the other processes, never a margin a passing run needs (the leader's runner
 * reads the task directory every 5 s while idle, and the machine may be busy).
 */
const DEADLINE_MS = 45_000;
/** Two daemons, a browser and a takeover on a busy machine: took 35 s at load 8 on 2 cores. */
const TEST_TIMEOUT_MS = 150_000;

let browser: Browser;
const running: DaemonProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
  });
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((daemon) => daemon.kill()));
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

/** testConfig's group `${prefix}:stream`/workers, behind http.auth with alice an operator. */
async function actingConfig(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "sj-task-kill-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const operators = join(dir, "operators");
  await writeFile(operators, `${ALICE.username}:${ALICE.password}\n`);
  const base = testConfig(fixture.server.url, prefix, [{}]);
  const config: JanitorConfig = {
    ...base,
    http: {
      ...base.http,
      auth: {
        bearerTokenFile: "",
        basicAuthFile: "",
        roles: { operator: { bearerTokenFile: "", basicAuthFile: operators } },
      },
      ui: { ...base.http.ui, actions: true },
    },
  };
  const file = await writeConfigFile(config);
  cleanups.push(file.remove);
  return file.path;
}

/** Leader per its own /metrics (behind http.auth); false when it does not answer. */
async function isLeader(daemon: DaemonProcess): Promise<boolean> {
  try {
    const response = await fetch(`${daemon.httpUrl}/metrics`, {
      headers: { authorization: basic(`${ALICE.username}:${ALICE.password}`) },
    });
    return /^stream_janitor_leader(\{[^}]*\})? 1$/mu.test(await response.text());
  } catch {
    return false;
  }
}

interface ShownTask {
  status: string;
  moved: number;
  toMove: number;
  started: string;
}

/** The task page's facts after a reload: what alice reads. */
async function reloadTask(page: Page): Promise<ShownTask> {
  await page.reload();
  const facts = page.locator("dl.facts dd");
  const moved = /^(\d+) of (\d+)/u.exec(await facts.nth(1).innerText());
  return {
    status: (await facts.nth(0).innerText()).trim(),
    moved: Number(moved?.[1]),
    toMove: Number(moved?.[2]),
    started: await facts.nth(5).innerText(),
  };
}

/** Reloads the task page until it shows what `holds` wants (bounded by DEADLINE_MS). */
function taskPageWhen(
  page: Page,
  holds: (task: ShownTask) => boolean,
  what: string,
): Promise<ShownTask> {
  return waitFor(
    async () => {
      const shown = await reloadTask(page);
      return holds(shown) ? shown : undefined;
    },
    { timeoutMs: DEADLINE_MS, intervalMs: 0, what },
  );
}

/** The two daemons, once exactly one leads; the other is the standby. */
async function leaderAndStandby(path: string) {
  const daemons = await Promise.all([DaemonProcess.start(path), DaemonProcess.start(path)]);
  running.push(...daemons);
  const leader = await waitFor(
    async () => {
      const flags = await Promise.all(daemons.map(isLeader));
      return flags.filter(Boolean).length === 1 ? daemons[flags.indexOf(true)] : undefined;
    },
    { timeoutMs: DEADLINE_MS, intervalMs: 50, what: "one leader" },
  );
  const standby = daemons.find((daemon) => daemon !== leader);
  if (standby === undefined) throw new Error("no standby");
  return { leader, standby };
}

/** Alice, on the group page of `daemon`'s console, starts "redrive all as a task" and follows it. */
async function startTaskOnPage(
  daemon: DaemonProcess,
  stream: string,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width: 1200, height: 800 },
    javaScriptEnabled: false,
    httpCredentials: ALICE,
  });
  const page = await context.newPage();
  const query = new URLSearchParams({ stream, group: "workers" });
  await page.goto(`${daemon.httpUrl}/ui/group?${query.toString()}`);
  await page.fill('input[name="confirm"]', "workers");
  await page.click('button:has-text("redrive all as a task")');
  await expect(page.locator(".outcome").innerText()).resolves.toContain(
    `started by alice: ${DEAD_LETTERS} dead letter(s)`,
  );
  await page.click("text=follow the task");
  const url = new URL(page.url());
  expect(url.origin).toBe(new URL(daemon.httpUrl).origin);
  expect(url.pathname).toBe("/ui/task");
  return { context, page };
}

describe("a redrive task started in chromium survives kill -9 of the leader", () => {
  it(
    "alice starts a task of all on the standby's console; the leader is killed mid-task; the page shows it COMPLETED, every dead letter moved exactly once; the audit names her",
    async () => {
      const prefix = uniquePrefix("b-task-kill");
      const path = await actingConfig(prefix);
      const stream = `${prefix}:stream`;
      await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
      const dead = groupConfig(stream).deadLetterStream;
      const letters = await addDeadLetters(fixture.redis, {
        stream,
        group: "workers",
        deadLetterStream: dead,
        count: DEAD_LETTERS,
      });
      const { leader, standby } = await leaderAndStandby(path);
      const { context, page } = await startTaskOnPage(standby, stream);

      await taskPageWhen(page, (task) => task.moved > 0, "the task page to show progress");
      await leader.kill();
      expect((await leader.exited).signal).toBe("SIGKILL");
      const partly = await reloadTask(page);
      expect(partly.status).toBe("RUNNING");
      expect(partly.moved).toBeGreaterThan(0);
      expect(partly.moved).toBeLessThan(DEAD_LETTERS);

      const done = await taskPageWhen(
        page,
        (task) => task.status !== "RUNNING",
        "the task page to show the task ended",
      );
      const all = { status: "COMPLETED", moved: DEAD_LETTERS, toMove: DEAD_LETTERS };
      expect(done).toMatchObject(all);
      expect(done.started).toContain("by alice");
      expect(await isLeader(standby)).toBe(true);
      await context.close();

      // Exactly once: each dead letter's original id once in the requeue target, none left.
      const outcome = await expectExactlyOnce(fixture.redis, {
        stream,
        group: "workers",
        deadLetterStream: dead,
        originalIds: letters.map((letter) => letter.originalId),
      });
      expect(outcome).toEqual({ stillPending: 0, requeued: DEAD_LETTERS, deadLettered: 0 });
      expect(await fixture.redis.xlen(stream)).toBe(DEAD_LETTERS);
      expect(await fixture.redis.xlen(dead)).toBe(0);

      // A console start is its ui-action (README "Roles and actions"), naming alice; the task
      // ends once, written by the leader that finished it.
      const events = await eventsIn(fixture.redis, `${prefix}:events`);
      const actions = events.filter((e) => e.type === "ui-action" && e.stream === stream);
      const action = (detail = "{}") => (JSON.parse(detail) as { action?: string }).action;
      expect(actions.map((e) => [e.by, action(e.detail)])).toEqual([["alice", "task"]]);
      const tasks = events.filter((e) => e.type?.startsWith("task-") === true);
      expect(tasks.map((e) => [e.type, e.count])).toEqual([
        ["task-finished", String(DEAD_LETTERS)],
      ]);
    },
    TEST_TIMEOUT_MS,
  );
});
