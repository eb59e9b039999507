import { describe, expect, it } from "vitest";
import { GROUP_STATUSES } from "../../src/core/groupStatus.js";
import { judgeGroup, type JudgeSettings } from "../../src/status/judgeGroup.js";
import type { ReadableSample, StatusSample } from "../../src/status/StatusSample.js";

const settings: JudgeSettings = { stuckAfterMs: 10_000, seenWithinMs: 30_000 };

/** A healthy sample at second `s`: nothing waits, a consumer read just now. */
function at(s: number, overrides: Partial<ReadableSample> = {}): ReadableSample {
  return {
    readable: true,
    atMs: 1_700_000_000_000 + s * 1000,
    lag: 0,
    pending: 0,
    due: 0,
    oldestPendingIdleMs: 0,
    deadLetters: 0,
    retryLane: null,
    lastDeliveredId: `${1000 + s}-0`,
    entriesRead: 100 + s * 10,
    consumerCount: 1,
    minConsumerIdleMs: 5,
    ...overrides,
  };
}

function unreadable(s: number, error = "no group workers on s"): StatusSample {
  return { readable: false, atMs: 1_700_000_000_000 + s * 1000, error };
}

/** Three samples, 10 s apart, each with its own overrides. */
function window(...overrides: Partial<ReadableSample>[]): ReadableSample[] {
  return overrides.map((o, i) => at(i * 10, o));
}

const frozen = { lastDeliveredId: "1000-0", entriesRead: 100 };

describe("judgeGroup (contract section 9, first match wins)", () => {
  it("UNKNOWN and provisional without samples, or with one", () => {
    expect(judgeGroup([], settings)).toMatchObject({ status: "UNKNOWN", provisional: true });
    const one = judgeGroup([at(0, { lag: 50 })], settings);
    expect(one).toMatchObject({ status: "UNKNOWN", provisional: true });
    expect(one.reason).toContain("one sample");
  });

  it("ERROR when the latest sample could not be read, whatever came before", () => {
    const verdict = judgeGroup([at(0), at(10), unreadable(20, "WRONGTYPE x")], settings);
    expect(verdict).toEqual({ status: "ERROR", reason: "cannot read: WRONGTYPE x" });
    expect(judgeGroup([unreadable(0)], settings).status).toBe("ERROR");
  });

  it("starts afresh after an unreadable sample: a group created again is not a REWIND", () => {
    const samples = [at(0, { lastDeliveredId: "9000-0" }), unreadable(10), at(20), at(30)];
    expect(judgeGroup(samples, settings).status).toBe("OK");
    expect(judgeGroup([at(0), unreadable(10), at(20)], settings)).toMatchObject({
      status: "UNKNOWN",
      provisional: true,
    });
  });

  it("REWIND when the last-delivered id moved backwards within the window, before all else", () => {
    const verdict = judgeGroup(
      window(
        { lastDeliveredId: "5000-0" },
        { lastDeliveredId: "5000-3" },
        // Also STOP-worthy (work waits, no consumer): REWIND is matched first.
        { lastDeliveredId: "0-0", lag: 80, consumerCount: 0, minConsumerIdleMs: null },
      ),
      settings,
    );
    expect(verdict.status).toBe("REWIND");
    expect(verdict.reason).toBe(
      "last-delivered id moved back from 5000-3 to 0-0 (XGROUP SETID) 0s ago: " +
        "entries after it are delivered again",
    );
  });

  it("STOP when work waits and no consumer was seen in the whole window", () => {
    const none = { consumerCount: 0, minConsumerIdleMs: null, ...frozen };
    const verdict = judgeGroup(window(none, none, { ...none, lag: 12 }), settings);
    expect(verdict).toEqual({
      status: "STOP",
      reason: "work waits (lag 12, 0 due pending) and the group has no consumer",
    });
    const gone = { minConsumerIdleMs: 45_000, ...frozen };
    const due = judgeGroup(window(gone, gone, { ...gone, lag: 0, due: 3 }), settings);
    expect(due.status).toBe("STOP");
    expect(due.reason).toBe(
      "work waits (lag 0, 3 due pending) and no consumer read in 30s " +
        "(1 consumers, latest read attempt 45s ago)",
    );
  });

  it("not STOP when a consumer was seen at any sample, or when no work waits", () => {
    const gone = { minConsumerIdleMs: 45_000, lag: 5 };
    // Seen once: a read attempt 29.999 s before the latest sample (within the 30 s window).
    // An attempt seen at the first sample but 50 s before the latest is not seen any more.
    const seenOnce = window(gone, { ...gone, minConsumerIdleMs: 19_999 }, gone);
    expect(judgeGroup(seenOnce, settings).status).not.toBe("STOP");
    const idle = { minConsumerIdleMs: 45_000, ...frozen };
    expect(judgeGroup(window(idle, idle, idle), settings).status).toBe("OK");
  });

  it("STALL when consumers are seen, lag > 0 in every sample and the position never moved", () => {
    const verdict = judgeGroup(
      window({ ...frozen, lag: 40 }, { ...frozen, lag: 45 }, { ...frozen, lag: 52 }),
      settings,
    );
    expect(verdict).toEqual({
      status: "STALL",
      reason:
        "lag 40 -> 52 and the read position stayed at entries-read 100 for 20s while " +
        "consumers were seen (latest read attempt 0s ago)",
    });
  });

  it("STALL judges the position by the last-delivered id when entries-read is unknown", () => {
    const noCount = { lastDeliveredId: "1000-0", entriesRead: null, lag: 7 };
    const verdict = judgeGroup(window(noCount, noCount, noCount), settings);
    expect(verdict.status).toBe("STALL");
    expect(verdict.reason).toContain("last-delivered id 1000-0");
  });

  it("not STALL when lag was 0 or unknown in some sample", () => {
    expect(
      judgeGroup(
        window({ ...frozen, lag: 4 }, { ...frozen, lag: 0 }, { ...frozen, lag: 4 }),
        settings,
      ).status,
    ).not.toBe("STALL");
    expect(
      judgeGroup(
        window({ ...frozen, lag: 4 }, { ...frozen, lag: null }, { ...frozen, lag: 4 }),
        settings,
      ).status,
    ).not.toBe("STALL");
  });

  it("STUCK when the oldest pending entry idles past stuckAfterMs in every sample", () => {
    const stuck = { pending: 3, due: 3, oldestPendingIdleMs: 12_000 };
    const verdict = judgeGroup(
      window(stuck, stuck, { ...stuck, oldestPendingIdleMs: 32_000 }),
      settings,
    );
    expect(verdict).toEqual({
      status: "STUCK",
      reason: "oldest pending entry idle 32s, past 10s in every sample for 20s (3 pending, 3 due)",
    });
    const once = window({ ...stuck, oldestPendingIdleMs: 9000 }, stuck, stuck);
    expect(judgeGroup(once, settings).status).toBe("OK");
  });

  it("WARN when the position moves but lag, above 0 throughout, grew over the window", () => {
    const verdict = judgeGroup(
      window(
        { lag: 340, entriesRead: 1000 },
        { lag: 700, entriesRead: 3100 },
        { lag: 1200, entriesRead: 5200 },
      ),
      settings,
    );
    expect(verdict).toEqual({
      status: "WARN",
      reason: "lag 1200 and growing: 340 -> 1200 in 20s while consumers read 210/s",
    });
  });

  it("no WARN when lag touched 0 within the window (steady load keeps up)", () => {
    const samples = window({ lag: 0 }, { lag: 3 }, { lag: 5 });
    expect(judgeGroup(samples, settings).status).toBe("OK");
    const shrinking = window({ lag: 50 }, { lag: 80 }, { lag: 20 });
    expect(judgeGroup(shrinking, settings).status).toBe("OK");
  });

  it("UNKNOWN when lag is unknown and nothing above applies", () => {
    const verdict = judgeGroup(
      window({ lag: 3 }, { lag: null }, { lag: null, pending: 2 }),
      settings,
    );
    expect(verdict.status).toBe("UNKNOWN");
    expect(verdict.provisional).toBeUndefined();
    expect(verdict.reason).toBe(
      "lag unknown: Redis reports it as null or above the stream's length (entries deleted or " +
        "trimmed after the group's position); 2 pending, 0 due",
    );
  });

  it("OK otherwise, with the numbers", () => {
    const verdict = judgeGroup(window({}, {}, { lag: 2, pending: 4, due: 1 }), settings);
    expect(verdict).toEqual({ status: "OK", reason: "lag 2, 4 pending, 1 due over 20s" });
  });

  it("can give each of the eight statuses", () => {
    const frozenLag = { ...frozen, lag: 9 };
    const cases: StatusSample[][] = [
      [unreadable(0)],
      window({ lastDeliveredId: "9-0" }, { lastDeliveredId: "1-0" }),
      window(
        { ...frozenLag, consumerCount: 0, minConsumerIdleMs: null },
        { ...frozenLag, consumerCount: 0, minConsumerIdleMs: null },
      ),
      window(frozenLag, frozenLag),
      window(
        { pending: 1, oldestPendingIdleMs: 11_000 },
        { pending: 1, oldestPendingIdleMs: 21_000 },
      ),
      window({ lag: 1 }, { lag: 2 }),
      window({ lag: null }, { lag: null }),
      window({}, {}),
    ];
    expect(cases.map((samples) => judgeGroup(samples, settings).status)).toEqual([
      ...GROUP_STATUSES,
    ]);
  });
});
