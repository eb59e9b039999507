import { describe, expect, it } from "vitest";
import type { StatusSampleReport } from "../../src/core/groupStatus.js";
import { formatStatusReport } from "../../src/operations/formatStatusReport.js";
import { statusReport } from "../support/statusFixture.js";

describe("formatStatusReport (the table of `stream-janitor status`)", () => {
  it("puts the bad statuses first, then UNKNOWN and OK, with since, lag, pending, due and reason", () => {
    const report = statusReport([
      { stream: "a", group: "ok", status: "OK", reason: "lag 0", since: 400_000 },
      {
        stream: "b",
        group: "slow",
        status: "WARN",
        reason: "lag 340 -> 1200 in 90s",
        since: 910_000,
        sample: {
          lag: 1200,
          pending: 40,
          due: 2,
          oldestPendingIdleMs: 5000,
          deadLetters: 1,
          retryLane: null,
          lastDeliveredId: "5-0",
        },
      },
      {
        stream: "c",
        group: "new",
        status: "UNKNOWN",
        reason: "fewer than 2 samples",
        sample: { ...statusReport([{}]).groups[0]?.sample, lag: null } as StatusSampleReport,
      },
      { stream: "d", group: "gone", status: "ERROR", reason: "no such group", since: 1_000_000 },
    ]);
    const lines = formatStatusReport(report).split("\n");
    expect(lines[0]).toBe(
      "leader janitor-1:4242 (fencing token 7), redis 7.2.4 standalone, sampled every 10s over 10 samples",
    );
    const table = lines.slice(lines.indexOf("") + 1);
    expect(table[0]).toMatch(/^STREAM\s+GROUP\s+STATUS\s+SINCE\s+LAG\s+PENDING\s+DUE\s+REASON$/u);
    expect(table.slice(1).map((line) => line.split(/\s+/u).slice(0, 3).join(" "))).toEqual([
      "d gone ERROR",
      "b slow WARN",
      "c new UNKNOWN",
      "a ok OK",
    ]);
    // SINCE is how long the status has held at the latest sample (Redis clock on both sides).
    expect(table[2]).toMatch(/^b\s+slow\s+WARN\s+1m30s\s+1200\s+40\s+2\s+lag 340 -> 1200 in 90s$/u);
    expect(table[1]).toMatch(/ERROR\s+0ms\s/u);
    expect(table[3]).toMatch(/UNKNOWN\s+1m40s\s+\?\s+3\s+0\s+fewer than 2 samples$/u);
  });

  it("names a replica that is not the leader, an unknown server, and says when there are no groups", () => {
    const report = statusReport([]);
    report.leader = { isLeader: false, instance: "janitor-2:99", fencingToken: null };
    report.server = { product: null, version: null, mode: "cluster", capabilities: {} };
    expect(formatStatusReport(report)).toBe(
      "replica janitor-2:99 (not the leader), server not detected yet (cluster), sampled every 10s over 10 samples\n\nno groups sampled yet",
    );
  });
});
