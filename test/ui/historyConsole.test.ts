import { EventEmitter } from "node:events";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GroupSet } from "../../src/core/GroupSet.js";
import { resolveGroup, type ResolvedGroup } from "../../src/core/resolveGroup.js";
import type { RunningHttpServer } from "../../src/http/createHttpServer.js";
import { startRouteServer } from "../support/startRouteServer.js";
import { createStatusMetrics } from "../../src/metrics/statusMetrics.js";
import { GroupHistory } from "../../src/status/GroupHistory.js";
import type { ReadableSample } from "../../src/status/StatusSample.js";
import { StatusSampler } from "../../src/status/StatusSampler.js";
import { createConsoleRoute } from "../../src/ui/createConsole.js";
import { SweepLog } from "../../src/ui/SweepLog.js";
import { addStuckEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";

/**
 * The history drawn by the console (README "Web console"), on a real Redis: a real status
 * sample of a group with lag 5 and 3 pending entries, and two samples fabricated 30 and 10
 * minutes before it (the history's minutes are the samples' own times: no clock to wait on),
 * plus a sweep of the leader. The overview's sparkline and the group page's charts must draw
 * exactly those points, and say since when the history is kept.
 */
const fixture = useRedisServer();
const prefix = uniquePrefix("history");
const stream = `${prefix}:orders`;
const groupName = "billing";
let http: RunningHttpServer;
let sampledAt = 0;

function fabricated(atMs: number, lag: number): ReadableSample {
  return {
    readable: true,
    atMs,
    lag,
    pending: 3,
    due: 3,
    oldestPendingIdleMs: 120_000,
    deadLetters: 0,
    retryLane: null,
    lastDeliveredId: "1-0",
    entriesRead: 3,
    consumerCount: 1,
    minConsumerIdleMs: 5,
  };
}

beforeAll(async () => {
  const { redis } = fixture;
  const config = testConfig(fixture.server.url, prefix, [{ stream, group: groupName }]);
  const groups: ResolvedGroup[] = config.groups.map(resolveGroup);
  const group = groups[0];
  if (group === undefined) throw new Error("no group");
  await addStuckEntries(
    redis,
    stream,
    groupName,
    [
      ["n", "1"],
      ["n", "2"],
      ["n", "3"],
    ],
    {
      idleMs: 120_000,
    },
  );
  for (let n = 0; n < 5; n += 1) await redis.xadd(stream, "*", "n", `later-${n}`);
  const history = new GroupHistory(60);
  const sampler = new StatusSampler({
    redis: fixture.server.client(),
    groups,
    config,
    metrics: createStatusMetrics(new Registry()),
    pelScans: new Map(),
    logger: pino({ level: "silent" }),
    instance: "test-host:1",
    isLeader: () => true,
    fencingToken: () => 7,
    writeEvent: () => undefined,
    history,
  });
  await sampler.sampleOnce();
  sampledAt = sampler.report().generatedAt;
  history.recordSample(group.id, fabricated(sampledAt - 30 * 60_000, 310), true);
  history.recordSample(group.id, fabricated(sampledAt - 10 * 60_000, 700), true);
  const supervisor = new EventEmitter();
  history.follow(supervisor);
  supervisor.emit(
    "group-swept",
    { stream, group: groupName, claimed: 4, requeued: 3, deadLettered: 1 },
    Date.now(),
    sampledAt,
  );
  http = await startRouteServer([
    createConsoleRoute({
      board: sampler,
      sweeps: new SweepLog(),
      groups: new GroupSet(groups),
      redis: fixture.server.client(),
      config,
      history,
    }),
  ]);
});
afterAll(() => http.close());

async function page(path: string): Promise<string> {
  const response = await fetch(`${http.url}${path}`);
  expect(response.status).toBe(200);
  return response.text();
}

/**
 * Where a line of 60 points, the top its largest, draws a lone point: the sparkline (59 × 16
 * units) in whole units, the charts (268 × 64) to one decimal.
 */
function lonePoint(index: number, value: number, top: number, width: number, height: number) {
  const round = (n: number) => (width === 59 ? Math.round(n) : Math.round(n * 10) / 10);
  const step = width / 59;
  return `M${round(index * step)} ${round(height - (value * height) / top)}h${round(Math.max(1, step / 2))}`;
}

describe("the history in the console", () => {
  it("draws each group's lag over the last 60 minutes on the overview", async () => {
    const html = await page("/ui");
    expect(html).toContain("<th>lag, 60 min</th>");
    const d = [
      lonePoint(29, 310, 700, 59, 16),
      lonePoint(49, 700, 700, 59, 16),
      lonePoint(59, 5, 700, 59, 16),
    ];
    expect(html).toContain(`<path d="${d.join(" ")}" />`);
    expect(html).toContain("<title>lag 5, falling from 310 over 31 min, peak 700</title>");
    expect(html).not.toContain("<script");
  });

  it("charts every series on the group page, with the sweep's rates and since when it is kept", async () => {
    const html = await page(`/ui/group?stream=${encodeURIComponent(stream)}&group=${groupName}`);
    expect(html).toContain("<h2>Last 60 minutes</h2>");
    const since = new Date(Math.floor(sampledAt / 60_000) * 60_000 - 30 * 60_000);
    expect(html).toContain(`history since ${since.toISOString().slice(11, 16)} UTC`);
    expect(html).toContain(
      "<figcaption>lag 5, falling from 310 over 31 min, peak 700</figcaption>",
    );
    expect(html).toContain("<figcaption>pending 3, steady over 31 min</figcaption>");
    expect(html).toContain(
      "<figcaption>backlog 6, falling from 313 over 31 min, peak 703</figcaption>",
    );
    expect(html).toContain("<figcaption>claimed per min 4, rising from 0 over 31 min</figcaption>");
    expect(html).toContain(
      "<figcaption>dead-lettered per min 1, rising from 0 over 31 min</figcaption>",
    );
    const lag = [
      lonePoint(29, 310, 700, 268, 64),
      lonePoint(49, 700, 700, 268, 64),
      lonePoint(59, 5, 700, 268, 64),
    ];
    expect(html).toContain(`d="${lag.join(" ")}"`);
    expect(html).not.toContain("this replica is standby");
  });
});
