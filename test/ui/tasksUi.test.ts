import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { eventsIn } from "../support/eventsIn.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import {
  basic,
  bearer,
  csrfOf,
  groupPath,
  leaderRound,
  postForm,
  rawRequest,
  startActionsServer,
  TOKENS,
  VIEWER,
  type ActionsServer,
  groupWithDeadLetters as addGroup,
} from "./actionsSupport.js";

/**
 * Redrive tasks in the console (README "Web console"): the group page lists its tasks, an operator
 * starts one from the selection forms and cancels one from its row, each audited as a ui-action.
 */
const fixture = useRedisServer();
let server: ActionsServer;

beforeAll(async () => {
  server = await startActionsServer(fixture.redis, fixture.server.url, uniquePrefix("tasks-ui"));
});
afterAll(() => server.close());

function groupWithDeadLetters(name: string, count: number): Promise<ResolvedGroup> {
  return addGroup(fixture.redis, server, name, count);
}

async function get(path: string, authorization: string): Promise<{ status: number; text: string }> {
  return rawRequest(`${server.http.url}${path}`, "GET", { authorization });
}

function fields(group: ResolvedGroup, csrf: string, more: [string, string][]): [string, string][] {
  return [["csrf", csrf], ["stream", group.stream], ["group", group.group], ...more];
}

describe("redrive tasks in the console", () => {
  it("an operator starts a task of all (name typed back) from the page; the page lists it, its progress shows, the event names the operator", async () => {
    const group = await groupWithDeadLetters("task-start", 5);
    const page = (await get(groupPath(group), bearer(TOKENS.alice))).text;
    expect(page).toContain('formaction="/ui/actions/task"');
    expect(page).toContain("No redrive tasks of this group.");
    const csrf = csrfOf(page);
    const unconfirmed = await postForm(
      server,
      "task",
      bearer(TOKENS.alice),
      fields(group, csrf, [
        ["scope", "all"],
        ["confirm", "nope"],
      ]),
    );
    expect(unconfirmed.status).toBe(400);
    const started = await postForm(
      server,
      "task",
      bearer(TOKENS.alice),
      fields(group, csrf, [
        ["scope", "all"],
        ["confirm", group.group],
      ]),
    );
    expect(started.status).toBe(200);
    const id = /redrive task (rt-[0-9a-z]+-[0-9a-f]{6}) started by alice: 5 dead letter/u.exec(
      started.text,
    )?.[1];
    expect(id).toBeDefined();
    expect(started.text).toContain(`href="/ui/task?id=${id}"`);

    const listed = (await get(groupPath(group), basic(VIEWER))).text;
    expect(listed).toMatch(
      new RegExp(
        `${id}</code></a>\\s*</td>\\s*<td><span class="status s-WARN">RUNNING</span>`,
        "u",
      ),
    );
    expect(listed).toContain("0 of 5 (0%)");
    expect(listed).not.toContain("/ui/actions/cancel");

    await leaderRound(server, fixture.redis, 2);
    const moved = await fixture.redis.xlen(group.stream);
    expect(moved).toBeGreaterThan(0);
    expect(moved).toBeLessThan(5);
    const taskPage = await get(`/ui/task?id=${id}`, basic(VIEWER));
    expect(taskPage.status).toBe(200);
    expect(taskPage.text).toContain(`${moved} of 5`);
    expect(taskPage.text).toContain("alice");
    // A viewer's page of a running task has no form: it refreshes itself to show progress.
    expect(taskPage.text).toContain('http-equiv="refresh"');
    const operatorTaskPage = await get(`/ui/task?id=${id}`, bearer(TOKENS.bob));
    expect(operatorTaskPage.text).toContain('action="/ui/actions/cancel"');
    expect(operatorTaskPage.text).not.toContain('http-equiv="refresh"');

    const [event] = (await eventsIn(fixture.redis, server.eventsStream)).filter(
      (e) => e.type === "ui-action" && e.stream === group.stream,
    );
    expect(event).toMatchObject({ by: "alice", count: "5" });
    expect(JSON.parse(event?.detail ?? "{}")).toMatchObject({
      action: "task",
      selection: { scope: "all" },
      result: { id, status: "RUNNING", toMove: 5, startedBy: "alice" },
    });
  });

  it("an operator cancels a running task from its row; a viewer cannot; a task of another group is not cancelled", async () => {
    const group = await groupWithDeadLetters("task-cancel", 4);
    const other = await groupWithDeadLetters("task-other", 2);
    const csrf = csrfOf((await get(groupPath(group), bearer(TOKENS.bob))).text);
    const byReason = fields(group, csrf, [
      ["scope", "filter"],
      ["reason", "max-deliveries"],
    ]);
    expect((await postForm(server, "task", bearer(TOKENS.bob), byReason)).status).toBe(200);
    const otherStart = await postForm(
      server,
      "task",
      bearer(TOKENS.bob),
      fields(other, csrf, [
        ["scope", "all"],
        ["confirm", "billing"],
      ]),
    );
    const otherId = /(rt-[0-9a-z]+-[0-9a-f]{6})/u.exec(otherStart.text)?.[1] ?? "";
    const page = (await get(groupPath(group), bearer(TOKENS.bob))).text;
    const id = /name="task" value="(rt-[^"]+)"/u.exec(page)?.[1] ?? "";
    expect(id).not.toBe("");

    const viewer = await postForm(
      server,
      "cancel",
      basic(VIEWER),
      fields(group, csrf, [["task", id]]),
    );
    expect(viewer.status).toBe(403);
    const wrongGroup = await postForm(
      server,
      "cancel",
      bearer(TOKENS.bob),
      fields(group, csrf, [["task", otherId]]),
    );
    expect(wrongGroup.status).toBe(409);
    expect(wrongGroup.text).toContain(`no redrive task ${otherId} of this group`);

    const cancelled = await postForm(
      server,
      "cancel",
      bearer(TOKENS.bob),
      fields(group, csrf, [["task", id]]),
    );
    expect(cancelled.status).toBe(200);
    expect(cancelled.text).toContain(`${id}: CANCELLING; the leader stops it at its next batch`);
    const after = (await get(groupPath(group), bearer(TOKENS.bob))).text;
    expect(after).toContain(">CANCELLING</span>");
    expect(after).not.toContain(`name="task" value="${id}"`);
    const otherPage = (await get(`/ui/task?id=${otherId}`, basic(VIEWER))).text;
    expect(otherPage).toContain(">RUNNING</span>");
    const events = (await eventsIn(fixture.redis, server.eventsStream)).filter(
      (e) => e.type === "ui-action" && e.stream === group.stream,
    );
    expect(
      events.map((e) => [e.by, (JSON.parse(e.detail ?? "{}") as { action: string }).action]),
    ).toEqual([
      ["bob", "task"],
      ["bob", "cancel"],
    ]);
  });

  it("a task by age selects the old dead letters only; ticked ids are refused as a task; an unknown task page is 404", async () => {
    const group = await groupWithDeadLetters("task-age", 3);
    const csrf = csrfOf((await get(groupPath(group), bearer(TOKENS.alice))).text);
    const young = await postForm(
      server,
      "task",
      bearer(TOKENS.alice),
      fields(group, csrf, [
        ["scope", "filter"],
        ["olderThan", "1d"],
      ]),
    );
    expect(young.status).toBe(200);
    expect(young.text).toContain("started by alice: 0 dead letter(s)");
    const ids = await postForm(
      server,
      "task",
      bearer(TOKENS.alice),
      fields(group, csrf, [
        ["scope", "ids"],
        ["id", "1-1"],
      ]),
    );
    expect(ids.status).toBe(409);
    expect(ids.text).toContain("a task redrives by reason, by age or all");
    const unknown = await get("/ui/task?id=rt-nope-000000", basic(VIEWER));
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain("No redrive task");
  });
});
