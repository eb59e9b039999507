import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { addDeadLetters } from "../operator/deadLetterFixtures.js";
import { eventsIn } from "../support/eventsIn.js";
import { waitFor } from "../support/waitFor.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import {
  basic,
  bearer,
  csrfOf,
  groupPath,
  postForm,
  rawRequest,
  startActionsServer,
  TOKENS,
  VIEWER,
  type ActionsServer,
  groupWithDeadLetters as addGroup,
} from "./actionsSupport.js";

/**
 * The console's actions (README "Roles and actions") against a real Redis: every rule refuses
 * before anything is touched, and an operator's action runs the CLI's code and is audited.
 */
const fixture = useRedisServer();
const prefix = uniquePrefix("actions");
let server: ActionsServer;

beforeAll(async () => {
  server = await startActionsServer(fixture.redis, fixture.server.url, prefix);
});
afterAll(() => server.close());

/** A group of its own for one test, with `count` dead letters of reason max-deliveries. */
function groupWithDeadLetters(name: string, count: number): Promise<ResolvedGroup> {
  return addGroup(fixture.redis, server, name, count);
}

async function pageAs(authorization: string, group: ResolvedGroup): Promise<string> {
  const answer = await rawRequest(`${server.http.url}${groupPath(group)}`, "GET", {
    authorization,
  });
  expect(answer.status).toBe(200);
  return answer.text;
}

/** The form fields of a purge of every dead letter of the group, with a token and a name. */
function purgeAll(group: ResolvedGroup, csrf: string, confirm = group.group): [string, string][] {
  return [
    ["csrf", csrf],
    ["stream", group.stream],
    ["group", group.group],
    ["scope", "all"],
    ["confirm", confirm],
  ];
}

async function refusedCount(reason: string): Promise<number> {
  const values = (await server.refused.get()).values;
  return values.find((v) => v.labels.reason === reason)?.value ?? 0;
}

describe("roles", () => {
  it("a viewer sees no action form (the page refreshes itself); an operator's page has forms and does not refresh", async () => {
    const group = await groupWithDeadLetters("roles-page", 1);
    const viewerPage = await pageAs(basic(VIEWER), group);
    expect(viewerPage).not.toContain("/ui/actions/");
    expect(viewerPage).toContain('http-equiv="refresh"');
    const operatorPage = await pageAs(bearer(TOKENS.alice), group);
    expect(operatorPage).toContain('action="/ui/actions/reap"');
    expect(operatorPage).toContain('formaction="/ui/actions/purge"');
    expect(operatorPage).not.toContain('http-equiv="refresh"');
  });

  it("a viewer's POST gets 403 and deletes nothing", async () => {
    const group = await groupWithDeadLetters("roles-post", 2);
    const csrf = csrfOf(await pageAs(bearer(TOKENS.alice), group));
    const before = await refusedCount("role");
    const answer = await postForm(server, "purge", basic(VIEWER), purgeAll(group, csrf));
    expect(answer.status).toBe(403);
    expect(answer.text).toContain("Only an operator may act");
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(2);
    expect(await refusedCount("role")).toBe(before + 1);
  });
});

describe("CSRF token", () => {
  it("refuses a POST without the token, with a wrong one, or with another operator's", async () => {
    const group = await groupWithDeadLetters("csrf", 2);
    const bobs = csrfOf(await pageAs(bearer(TOKENS.bob), group));
    const alices = csrfOf(await pageAs(bearer(TOKENS.alice), group));
    const before = await refusedCount("csrf");
    const wrong = `${alices.slice(0, -4)}AAAA`;
    for (const csrf of ["", wrong, bobs]) {
      const answer = await postForm(server, "purge", bearer(TOKENS.alice), purgeAll(group, csrf));
      expect(answer.status).toBe(403);
      expect(answer.text).toContain("token is missing, stale or not yours");
    }
    expect(await refusedCount("csrf")).toBe(before + 3);
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(2);
  });
});

describe("same origin", () => {
  it("refuses a POST from another site, by Sec-Fetch-Site or by Origin, and one that says neither", async () => {
    const group = await groupWithDeadLetters("origin", 1);
    const csrf = csrfOf(await pageAs(bearer(TOKENS.alice), group));
    const fields = purgeAll(group, csrf);
    const before = await refusedCount("origin");
    const attempts: Record<string, string>[] = [
      { "sec-fetch-site": "cross-site", origin: "http://evil.example" },
      { "sec-fetch-site": "same-site" },
      { "sec-fetch-site": "", origin: "http://evil.example" },
      // A no-referrer page's form sends Origin: null; only beside same-origin does it pass.
      { "sec-fetch-site": "", origin: "null" },
    ];
    for (const headers of attempts) {
      const sent = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== ""));
      const answer = await rawRequest(
        `${server.http.url}/ui/actions/purge`,
        "POST",
        {
          authorization: bearer(TOKENS.alice),
          "content-type": "application/x-www-form-urlencoded",
          ...sent,
        },
        new URLSearchParams(fields).toString(),
      );
      expect(answer.status).toBe(403);
      expect(answer.text).toContain("not sent from this console");
    }
    const neither = await rawRequest(
      `${server.http.url}/ui/actions/purge`,
      "POST",
      { authorization: bearer(TOKENS.alice), "content-type": "application/x-www-form-urlencoded" },
      new URLSearchParams(fields).toString(),
    );
    expect(neither.status).toBe(403);
    expect(await refusedCount("origin")).toBe(before + 5);
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(1);
  });
});

describe("GET never mutates", () => {
  it("a GET of an action path is 405, and reading the group page changes nothing", async () => {
    const group = await groupWithDeadLetters("get", 2);
    const query = new URLSearchParams(purgeAll(group, "x")).toString();
    const answer = await rawRequest(`${server.http.url}/ui/actions/purge?${query}`, "GET", {
      authorization: bearer(TOKENS.alice),
    });
    expect(answer.status).toBe(405);
    await pageAs(bearer(TOKENS.alice), group);
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(2);
  });
});

describe("all asks for the group's name", () => {
  it("refuses all without the name typed back (counted), then purges with it and records who", async () => {
    const group = await groupWithDeadLetters("all", 3);
    const csrf = csrfOf(await pageAs(bearer(TOKENS.alice), group));
    const before = await refusedCount("confirmation");
    for (const confirm of ["", "billin", "BILLING"]) {
      const answer = await postForm(
        server,
        "purge",
        bearer(TOKENS.alice),
        purgeAll(group, csrf, confirm),
      );
      expect(answer.status).toBe(400);
      expect(answer.text).toContain("needs the group&#39;s name typed back");
    }
    expect(await refusedCount("confirmation")).toBe(before + 3);
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(3);
    const done = await postForm(server, "purge", bearer(TOKENS.alice), purgeAll(group, csrf));
    expect(done.status).toBe(200);
    expect(done.text).toContain("purged 3 dead letter(s)");
    expect(done.text).toMatch(/<tr class="result">\s*<td>purge<\/td>\s*<td>3<\/td>/u);
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(0);
    const events = (await eventsIn(fixture.redis, server.eventsStream)).filter(
      (e) => e.type === "ui-action" && e.stream === group.stream,
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ by: "alice", group: "billing", count: "3" });
    const detail = JSON.parse(events[0]?.detail ?? "{}") as Record<string, unknown>;
    expect(detail).toMatchObject({
      action: "purge",
      role: "operator",
      selection: { scope: "all" },
      result: { purged: 3, remaining: 0 },
    });
    // The group page shows it among its events.
    expect(await pageAs(bearer(TOKENS.bob), group)).toContain("ui-action");
  });
});

describe("actions run the CLI's code", () => {
  it("redrives the ticked dead letters back to the stream, naming them in the event", async () => {
    const group = await groupWithDeadLetters("redrive", 3);
    const page = await pageAs(bearer(TOKENS.bob), group);
    const ids = (await fixture.redis.xrange(group.deadLetterStream, "-", "+")).map(([id]) => id);
    expect(page).toContain(`name="id" value="${ids[0]}" form="dl-selected"`);
    const fields: [string, string][] = [
      ["csrf", csrfOf(page)],
      ["stream", group.stream],
      ["group", group.group],
      ["scope", "ids"],
      ["id", ids[0] ?? ""],
      ["id", ids[2] ?? ""],
    ];
    const answer = await postForm(server, "redrive", bearer(TOKENS.bob), fields);
    expect(answer.status).toBe(200);
    expect(answer.text).toContain("redriven 2 dead letter(s)");
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(1);
    expect(await fixture.redis.xlen(group.stream)).toBe(2);
    const [event] = (await eventsIn(fixture.redis, server.eventsStream)).filter(
      (e) => e.type === "ui-action" && e.stream === group.stream,
    );
    expect(event).toMatchObject({ by: "bob", count: "2", ids: `${ids[0]} ${ids[2]}` });
  });

  it("purges by reason, and refuses a filter that selects nothing in particular", async () => {
    const group = await groupWithDeadLetters("reason", 2);
    await addDeadLetters(fixture.redis, {
      stream: group.stream,
      group: group.group,
      deadLetterStream: group.deadLetterStream,
      count: 1,
      reason: "action",
      firstOriginal: 10,
    });
    const csrf = csrfOf(await pageAs(bearer(TOKENS.alice), group));
    const base: [string, string][] = [
      ["csrf", csrf],
      ["stream", group.stream],
      ["group", group.group],
      ["scope", "filter"],
    ];
    const empty = await postForm(server, "purge", bearer(TOKENS.alice), [...base, ["reason", ""]]);
    expect(empty.status).toBe(400);
    const byReason = await postForm(server, "purge", bearer(TOKENS.alice), [
      ...base,
      ["reason", "action"],
    ]);
    expect(byReason.status).toBe(200);
    expect(byReason.text).toContain("purged 1 dead letter(s)");
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(2);
  });

  it("reaps the idle consumers that own nothing, and refuses an idle time of 0", async () => {
    const stream = `${uniquePrefix("reap")}:orders`;
    await fixture.redis.xgroup("CREATE", stream, "billing", "$", "MKSTREAM");
    await fixture.redis.xgroup("CREATECONSUMER", stream, "billing", "gone-1");
    const group = server.add(stream, "billing");
    const page = await pageAs(bearer(TOKENS.alice), group);
    // The form offers the group's reapConsumersIdleMs (1 s here).
    expect(page).toContain('name="idle" size="6" required value="1s"');
    const fields: [string, string][] = [
      ["csrf", csrfOf(page)],
      ["stream", stream],
      ["group", "billing"],
    ];
    const zero = await postForm(server, "reap", bearer(TOKENS.alice), [...fields, ["idle", "0"]]);
    expect(zero.status).toBe(400);
    expect(await consumerNames(stream)).toEqual(["gone-1"]);
    // The consumer's idle time is the server's: waited on, not slept for.
    await waitFor(async () => (await idleOf(stream, "gone-1")) >= 5, { what: "idle 5 ms" });
    const done = await postForm(server, "reap", bearer(TOKENS.alice), [...fields, ["idle", "5ms"]]);
    expect(done.status).toBe(200);
    expect(done.text).toContain("reaped 1 consumer(s): gone-1");
    expect(await consumerNames(stream)).toEqual([]);
  });
});

async function consumerNames(stream: string): Promise<string[]> {
  const reply = (await fixture.redis.call("XINFO", "CONSUMERS", stream, "billing")) as string[][];
  return reply.map((flat) => String(flat[flat.indexOf("name") + 1]));
}

async function idleOf(stream: string, name: string): Promise<number> {
  const reply = (await fixture.redis.call("XINFO", "CONSUMERS", stream, "billing")) as unknown[][];
  const flat = reply.find((f) => f[f.indexOf("name") + 1] === name) ?? [];
  return Number(flat[flat.indexOf("idle") + 1]);
}

describe("refusals are logged at most once a minute per address", () => {
  it("logs the first refusal, counts the next ones, logs again a minute later", async () => {
    const group = await groupWithDeadLetters("log", 1);
    const csrf = csrfOf(await pageAs(bearer(TOKENS.alice), group));
    const lines = () => server.logLines.filter((l) => l.msg?.toString().includes("action refused"));
    server.clock.now += 120_000;
    const before = lines().length;
    for (let i = 0; i < 3; i += 1) {
      await postForm(server, "purge", basic(VIEWER), purgeAll(group, csrf));
    }
    expect(lines().length).toBe(before + 1);
    server.clock.now += 60_000;
    await postForm(server, "purge", basic(VIEWER), purgeAll(group, csrf));
    expect(lines().length).toBe(before + 2);
    expect(lines().at(-1)).toMatchObject({ remoteAddress: "127.0.0.1", reason: "role" });
  });
});
