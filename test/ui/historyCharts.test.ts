import { describe, expect, it } from "vitest";
import { GroupHistory } from "../../src/status/GroupHistory.js";
import { historySection } from "../../src/ui/renderHistoryCharts.js";
import { sparklineCell } from "../../src/ui/renderSparkline.js";
import { linePath, maxKnown, thinPoints } from "../../src/ui/sparklinePath.js";
import { trendText } from "../../src/ui/trendText.js";

const N = Number.NaN;

describe("linePath", () => {
  it("scales the points into the box, newest right, 0 at the bottom", () => {
    expect(linePath([0, 5, 10], { width: 10, height: 20 }, 10)).toBe("M0 20L5 10 10 0");
  });

  it("breaks the line at unknown points instead of drawing a 0; a lone point is a short stroke", () => {
    expect(linePath([1, N, 1, 1, N], { width: 4, height: 10 }, 2)).toBe("M0 5h1 M2 5L3 5");
    expect(linePath([N, N], { width: 4, height: 10 }, 0)).toBe("");
  });

  it("draws a line of zeros (nothing known above 0) on the bottom edge", () => {
    expect(linePath([0, 0], { width: 1, height: 8 }, maxKnown([0, 0]))).toBe("M0 8L1 8");
  });
});

describe("thinPoints", () => {
  it("keeps each run's last known value, at most maxPoints", () => {
    expect(thinPoints([1, 2, 3, N, 5, N], 3)).toEqual([2, 3, 5]);
    expect(thinPoints([1, 2], 60)).toEqual([1, 2]);
    expect(thinPoints(new Float32Array(360), 60)).toHaveLength(60);
  });
});

describe("trendText", () => {
  it("says the figures in words", () => {
    const lag = [310, ...Array.from({ length: 58 }, () => 500), 1204];
    expect(trendText("lag", lag)).toBe("lag 1,204, rising from 310 over 60 min");
    expect(trendText("pending", [N, N, 4, 9, 2])).toBe(
      "pending 2, falling from 4 over 3 min, peak 9",
    );
    expect(trendText("claimed per min", [0, 0])).toBe("claimed per min 0, steady over 2 min");
    expect(trendText("lag", [N, N])).toBe("lag: no samples in the last 2 min");
  });
});

const T0 = 1_700_000_040_000;

function historyOf(minutes: number, lags: (number | null)[], leading = false): GroupHistory {
  const history = new GroupHistory(minutes);
  lags.forEach((lag, m) => {
    history.recordSample(
      "s/g",
      {
        readable: true,
        atMs: T0 + m * 60_000,
        lag,
        pending: 1,
        due: 0,
        oldestPendingIdleMs: 0,
        deadLetters: 0,
        retryLane: null,
        lastDeliveredId: "1-0",
        entriesRead: 1,
        consumerCount: 1,
        minConsumerIdleMs: 1,
      },
      leading,
    );
  });
  return history;
}

describe("the sparkline cell", () => {
  it("is an inline SVG with its text alternative, its path the points of the window", () => {
    const history = historyOf(3, [0, 5, 10]);
    const cell = sparklineCell(history, "s", "g", T0 + 2 * 60_000).text;
    expect(cell).toContain('role="img"');
    expect(cell).toContain("<title>lag 10, rising from 0 over 3 min</title>");
    // Whole units: 59 wide, 16 high.
    expect(cell).toContain('<path d="M0 16L30 8 59 0" />');
    expect(cell).not.toContain("<script");
  });

  it("is a dash for a group with no history", () => {
    expect(sparklineCell(new GroupHistory(60), "s", "g", T0).text).toContain(">-</td>");
  });
});

describe("the group page's charts", () => {
  it("draws one chart per series, says since when after a restart, and what a standby lacks", () => {
    const history = historyOf(60, [100, 50]);
    const end = T0 + 60_000;
    const view = history.viewOf("s/g", end);
    const section = historySection({ minutes: 60, view, leading: false }).text;
    expect(section).toContain("<h2>Last 60 minutes</h2>");
    expect(section).toContain("history since 22:14 UTC");
    expect(section).toContain("<figcaption>lag 50, falling from 100 over 2 min</figcaption>");
    expect(section.match(/<figure class="chart">/gu)).toHaveLength(7);
    expect(section).toContain("claimed per min: no samples in the last 60 min");
    expect(section).toContain("this replica is standby");
    // The lag's two points, at the right edge of the plot (268 wide, 64 high): 100 at the top.
    expect(section).toContain('d="M263.5 0L268 32"');
  });

  it("says nothing of a restart when the history covers the window, nor of rates while leading", () => {
    const history = historyOf(2, [1, 2], true);
    const view = history.viewOf("s/g", T0 + 60_000);
    const section = historySection({ minutes: 2, view, leading: true }).text;
    expect(section).not.toContain("history since");
    expect(section).not.toContain("standby");
    expect(section).toContain("claimed per min 0, steady over 2 min");
  });

  it("is left out when the history is off, and says so for a group not sampled yet", () => {
    expect(historySection(undefined).text).toBe("");
    expect(historySection({ minutes: 60, view: undefined, leading: true }).text).toContain(
      "No history of this group yet.",
    );
  });
});
