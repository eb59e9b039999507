import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDaemon, type RunningDaemon } from "../../src/daemon/startDaemon.js";
import { addStuckEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";

/**
 * The daemon's wiring of the history (README "Web console"): its status samples and its sweeps
 * reach the console's charts; with http.ui.historyMinutes 0 nothing is kept nor drawn.
 */
const fixture = useRedisServer();
const daemons: RunningDaemon[] = [];

async function start(name: string, historyMinutes: number) {
  const prefix = uniquePrefix(name);
  const stream = `${prefix}:orders`;
  const config = testConfig(fixture.server.url, prefix, [{ stream, group: "billing" }], {
    status: { ...testConfig("redis://unused", "unused").status, intervalMs: 100 },
  });
  await addStuckEntries(
    fixture.redis,
    stream,
    "billing",
    [
      ["n", "1"],
      ["n", "2"],
      ["n", "3"],
    ],
    {
      idleMs: 120_000,
    },
  );
  const daemon = await startDaemon(
    { ...config, http: { ...config.http, ui: { ...config.http.ui, historyMinutes } } },
    { logger: pino({ level: "silent" }), version: "0.0.0-history", onFatal: () => undefined },
  );
  daemons.push(daemon);
  const group = `${daemon.httpUrl}/ui/group?stream=${encodeURIComponent(stream)}&group=billing`;
  return { overview: `${daemon.httpUrl}/ui`, group };
}

const text = async (url: string): Promise<string> => (await fetch(url)).text();

let on: { overview: string; group: string };
let off: { overview: string; group: string };

beforeAll(async () => {
  on = await start("history-on", 60);
  off = await start("history-off", 0);
});
afterAll(async () => {
  for (const daemon of daemons) await daemon.stop();
});

describe("the daemon's history", () => {
  it("draws the samples on the overview and the leader's sweeps on the group page", async () => {
    // The leader's first sweep claims and requeues the three stuck entries.
    const page = await waitFor(
      async () => {
        const html = await text(on.group);
        return /claimed per min 3|from 3|peak 3/u.test(html) ? html : undefined;
      },
      { what: "the sweep's claims on the chart", timeoutMs: 30_000 },
    );
    expect(page).toContain("<h2>Last 60 minutes</h2>");
    expect(page).toMatch(/<figcaption>requeued per min [^<]*3/u);
    expect(page).toMatch(/<figcaption>pending \d/u);
    const overview = await text(on.overview);
    expect(overview).toContain("<th>lag, 60 min</th>");
    expect(overview).toMatch(/<svg\s+class="spark"[^>]*role="img">\s*<title>lag \d/u);
  });

  it("keeps and draws nothing with http.ui.historyMinutes 0", async () => {
    await waitFor(async () => (await text(off.overview)).includes("billing"), {
      what: "a sample of the group",
      timeoutMs: 30_000,
    });
    expect(await text(off.overview)).not.toContain("spark");
    expect(await text(off.group)).not.toContain("Last 0 minutes");
    expect(await text(off.group)).not.toContain('class="chart"');
  });
});
