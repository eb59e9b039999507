import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deadLetterIndexKeys } from "../../src/core/deadLetterIndex.js";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import type { GroupSweepResult } from "../../src/sweep/GroupSweepResult.js";
import { renderSweeperPage } from "../../src/ui/renderSweeperPage.js";
import { SweepLog } from "../../src/ui/SweepLog.js";
import { addDeadLetters } from "../operator/deadLetterFixtures.js";
import { addStuckEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { fabricatedReport } from "./fabricatedReport.js";
import {
  basic,
  groupPath,
  rawRequest,
  startActionsServer,
  VIEWER,
  type ActionsServer,
  groupWithDeadLetters,
} from "./actionsSupport.js";

/** Issue 34 item 6: find an entry or dead letter by id, page the dead letters, filter sweeps. */
const fixture = useRedisServer();
let server: ActionsServer;

beforeAll(async () => {
  server = await startActionsServer(fixture.redis, fixture.server.url, uniquePrefix("find"));
});
afterAll(() => server.close());

/** `count` dead letters of the group, indexed as the sweep writes them (envelope, same id). */
async function indexedGroup(name: string, count: number): Promise<ResolvedGroup> {
  const group = await groupWithDeadLetters(fixture.redis, server, name, count);
  const keys = deadLetterIndexKeys(group);
  for (const [id, fields] of await fixture.redis.xrange(group.deadLetterStream, "-", "+")) {
    const envelope = fields.filter((_, i) => fields[i - (i % 2)]?.startsWith("x-") === true);
    await fixture.redis.xadd(keys.index, id, ...envelope);
  }
  await fixture.redis.hset(keys.state, "complete", "1");
  return group;
}

async function page(path: string): Promise<string> {
  const answer = await rawRequest(`${server.http.url}${path}`, "GET", {
    authorization: basic(VIEWER),
  });
  expect(answer.status).toBe(200);
  return answer.text;
}

const shownIds = (text: string): string[] =>
  [...text.matchAll(/<td><code>(\d+-\d+)<\/code><\/td>\s*<td><code>1000-/gu)].map(
    (m) => m[1] ?? "",
  );

describe("dead letters are paged beyond the newest 50 by a cursor (an id)", () => {
  it("pages 120 dead letters newest first, 50 at a time; dead letters added meanwhile do not shift the pages", async () => {
    const group = await indexedGroup("paging", 120);
    const all = (await fixture.redis.xrevrange(group.deadLetterStream, "+", "-")).map(([id]) => id);
    const first = await page(groupPath(group));
    expect(shownIds(first)).toEqual(all.slice(0, 50));
    const older = /href="([^"]*before=[^"]*)"[^>]*>older dead letters/u.exec(first)?.[1];
    expect(older).toBeDefined();
    await addDeadLetters(fixture.redis, {
      stream: group.stream,
      group: "billing",
      deadLetterStream: group.deadLetterStream,
      count: 3,
      firstOriginal: 500,
    });
    const second = await page((older ?? "").replaceAll("&amp;", "&"));
    expect(shownIds(second)).toEqual(all.slice(50, 100));
    expect(second).toContain("newest dead letters");
    const third = await page(`${groupPath(group)}&before=${all[99]}`);
    expect(shownIds(third)).toEqual(all.slice(100));
    expect(third).not.toContain("older dead letters");
  });
});

describe("find by id", () => {
  it("says where an id was found: pending (owner, deliveries), a dead letter by its id or by its original id, or nowhere", async () => {
    const group = await indexedGroup("find", 3);
    const [pendingId] = await addStuckEntries(
      fixture.redis,
      group.stream,
      "billing",
      [["k", "v"]],
      {
        consumer: "worker-7",
        deliveries: 4,
      },
    );
    const [dead] = await fixture.redis.xrange(group.deadLetterStream, "-", "+", "COUNT", 1);
    const find = (id: string) =>
      page(`/ui/find?stream=${encodeURIComponent(group.stream)}&group=billing&id=${id}`);
    const groupPage = await page(groupPath(group));
    expect(groupPage).toContain('<form class="filter" method="get" action="/ui/find">');

    const pending = await find(pendingId ?? "");
    expect(pending).toContain("pending for worker-7");
    expect(pending).toMatch(/4 deliveries/u);
    const byDeadId = await find(dead?.[0] ?? "");
    expect(byDeadId).toContain(`dead letter ${dead?.[0]}`);
    expect(byDeadId).toContain("x-original-id 1000-1");
    const byOriginal = await find("1000-2");
    expect(byOriginal).toMatch(/dead letter \d+-\d+ \(x-original-id 1000-2\)/u);
    const nowhere = await find("1-1");
    expect(nowhere).toContain("1-1 was not found");
    const bad = await rawRequest(
      `${server.http.url}/ui/find?stream=${encodeURIComponent(group.stream)}&group=billing&id=nope`,
      "GET",
      { authorization: basic(VIEWER) },
    );
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("not a stream id");
  });
});

describe("the sweeper page can show only the sweeps that did work", () => {
  it("keeps the last sweeps that did work apart from the idle ones, shown with worked=1", () => {
    const log = new SweepLog();
    const sweep = (group: string, claimed: number): GroupSweepResult =>
      ({
        stream: "s",
        group,
        durationMs: 1,
        claimed,
        requeued: claimed,
        reassigned: 0,
        deadLettered: 0,
        ghosts: 0,
        complete: true,
      }) as GroupSweepResult;
    log.add(sweep("busy-1", 3), 1000);
    log.add(sweep("busy-2", 1), 2000);
    for (let i = 0; i < 60; i += 1) log.add(sweep(`idle-${i}`, 0), 3000 + i);
    expect(log.recent().map((s) => s.group)).not.toContain("busy-1");
    expect(log.recent({ workedOnly: true }).map((s) => s.group)).toEqual(["busy-2", "busy-1"]);
    const view = {
      report: fabricatedReport([]),
      lease: { status: "free" as const },
      leaseKey: "lease",
      paused: false,
      refreshSeconds: 5,
    };
    const worked = renderSweeperPage({
      ...view,
      recent: log.recent({ workedOnly: true }),
      workedOnly: true,
    });
    expect(worked).toContain("busy-1");
    expect(worked).not.toContain("idle-0");
    expect(worked).toContain('href="/ui/sweeper"');
    const all = renderSweeperPage({ ...view, recent: log.recent(), workedOnly: false });
    expect(all).toContain('href="/ui/sweeper?worked=1"');
  });
});
