import { describe, expect, it } from "vitest";
import { parseOverviewQuery } from "../../src/ui/overviewQuery.js";
import { renderGroupPage } from "../../src/ui/renderGroupPage.js";
import { renderOverview } from "../../src/ui/renderOverview.js";
import { SweepLog } from "../../src/ui/SweepLog.js";
import { resolveGroup } from "../../src/core/resolveGroup.js";
import { defaultGroupConfig } from "../../src/config/defaultConfig.js";
import { fabricatedGroup, fabricatedReport } from "./fabricatedReport.js";

const laneSample = { retryLane: 5, retryLaneLag: 2, retryLanePending: 3 };
const notRead = { ok: false as const, error: "not read in this test" };

/** The text of the page without tags, whitespace collapsed. */
function text(page: string): string {
  return page
    .replace(/<[^>]*>/gu, " ")
    .replace(/\s+/gu, " ")
    .trim();
}

describe("the console shows a group's retry lane work", () => {
  it("overview: lane lag and lane pending columns, '-' for a group without a lane", () => {
    const page = renderOverview({
      report: fabricatedReport([
        fabricatedGroup("orders", "audit", "OK", laneSample),
        fabricatedGroup("orders", "plain", "OK"),
      ]),
      sweeps: new SweepLog(),
      query: parseOverviewQuery(new URLSearchParams()),
      refreshSeconds: 10,
    });
    expect(text(page)).toContain("retry lane lane lag lane pending");
    const audit = page.slice(page.indexOf(">audit<"), page.indexOf(">plain<"));
    expect(audit).toMatch(
      /<td class="num">\s*5\s*<\/td>\s*<td class="num">\s*2\s*<\/td>\s*<td class="num">\s*3\s*<\/td>/u,
    );
  });

  it("group page: the lane's length, lag and pending", () => {
    const group = resolveGroup({ ...defaultGroupConfig("orders", "audit"), retryLane: true });
    const page = renderGroupPage({
      group,
      status: fabricatedGroup("orders", "audit", "OK", laneSample),
      nowMs: 1_700_000_060_000,
      detail: { consumers: notRead, pending: notRead, deadLetters: notRead, events: notRead },
      lastSweep: undefined,
      showBodies: false,
      paused: false,
      refreshSeconds: 10,
    });
    expect(text(page)).toContain("retry lane 5 in {orders}:audit:retry: lag 2, 3 pending");
  });
});
