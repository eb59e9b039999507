import { describe, expect, it } from "vitest";
import { formatInspectReport } from "../../src/operations/formatInspectReport.js";
import { formatStatusReport } from "../../src/operations/formatStatusReport.js";
import { readInspectReport } from "../../src/operations/inspectReport.js";
import { useRedisServer } from "../support/redisServer.js";
import { laneWithWork } from "../support/retryLaneFixture.js";
import { statusReport } from "../support/statusFixture.js";

const fixture = useRedisServer();

describe("a retry lane's work is shown under its group", () => {
  it("inspect: retryLane {stream, length, lag, pending} in --json, and in the text", async () => {
    const { stream, group, lane } = await laneWithWork(fixture.redis, "lane-inspect-work", 5);
    const config = {
      lease: { key: `${stream}:lease`, ttlMs: 15000, renewDeadlineMs: 10000, retryPeriodMs: 2000 },
      retention: [],
    };

    const report = await readInspectReport(fixture.redis, [group], config);

    expect(report.groups[0]).toMatchObject({
      pending: 0,
      retryLane: { stream: lane, length: 5, lag: 2, pending: 3 },
    });
    expect(formatInspectReport(report)).toContain(
      `retry lane of ${stream}/workers: ${lane}, 5 entries, lag 2, 3 pending`,
    );
  });

  it("status: the lane's lag and pending under the table", () => {
    const report = statusReport([
      {
        stream: "orders",
        group: "audit",
        sample: {
          lag: 0,
          pending: 0,
          due: 0,
          oldestPendingIdleMs: 0,
          deadLetters: 0,
          retryLane: 5,
          retryLaneLag: 2,
          retryLanePending: 3,
          lastDeliveredId: "999-0",
        },
      },
    ]);
    expect(formatStatusReport(report)).toContain(
      "retry lane of orders/audit: 5 entries, lag 2, 3 pending",
    );
  });
});
