import { describe, expect, it } from "vitest";
import { judgeGroup, type JudgeSettings } from "../../src/status/judgeGroup.js";
import type { ReadableSample } from "../../src/status/StatusSample.js";

/** Redis 7.2+: XINFO CONSUMERS idle counts every read attempt, empty ones too. */
const reported: JudgeSettings = { stuckAfterMs: 10_000, seenWithinMs: 30_000 };
/** Redis 7.0: an empty read leaves idle alone (no `inactive` field, a capability). */
const notReported: JudgeSettings = { ...reported, readAttemptsReported: false };

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
    lastDeliveredId: "1000-0",
    entriesRead: 100,
    consumerCount: 1,
    minConsumerIdleMs: 5,
    ...overrides,
  };
}

describe("judgeGroup on a server that does not report read attempts (Redis 7.0)", () => {
  // A caught-up consumer polls ">" and gets nothing: on 7.0 its idle keeps growing.
  const stuckOne = { pending: 1, due: 1, oldestPendingIdleMs: 40_000, minConsumerIdleMs: 45_000 };

  it("STUCK, not STOP, when only a due pending entry waits (lag 0)", () => {
    const samples = [at(0, stuckOne), at(10, stuckOne), at(20, stuckOne)];
    expect(judgeGroup(samples, notReported).status).toBe("STUCK");
    // Where read attempts are reported, the same numbers mean nobody read: STOP as before.
    expect(judgeGroup(samples, reported).status).toBe("STOP");
  });

  it("still STOP when lag > 0 and no consumer was seen", () => {
    const lagging = { ...stuckOne, lag: 3 };
    const verdict = judgeGroup([at(0, lagging), at(10, lagging), at(20, lagging)], notReported);
    expect(verdict).toEqual({
      status: "STOP",
      reason:
        "work waits (lag 3, 1 due pending) and no consumer read in 30s " +
        "(1 consumers, latest read attempt 45s ago)",
    });
  });
});

describe("judgeGroup with a lag Redis reports as null", () => {
  // Redis 7.0: a group created at `$` has no entries-read, hence no lag, until it catches up.
  const behind = {
    lag: null,
    entriesRead: null,
    addedAfterPosition: true,
    consumerCount: 0,
    minConsumerIdleMs: null,
  };

  it("STOP when entries were added after the read position and no consumer reads", () => {
    const verdict = judgeGroup([at(0, behind), at(10, behind)], notReported);
    expect(verdict).toEqual({
      status: "STOP",
      reason:
        "work waits (lag unknown but > 0: entries were added after last-delivered id 1000-0, " +
        "0 due pending) and the group has no consumer",
    });
    expect(judgeGroup([at(0, behind), at(10, behind)], reported).status).toBe("STOP");
  });

  it("UNKNOWN while a consumer reads, and the reason does not blame deletions", () => {
    const reading = { ...behind, consumerCount: 1, minConsumerIdleMs: 5 };
    const verdict = judgeGroup(
      [at(0, reading), at(10, { ...reading, lastDeliveredId: "1001-0" })],
      reported,
    );
    expect(verdict.status).toBe("UNKNOWN");
    expect(verdict.reason).toBe(
      "lag unknown: Redis has no entries-read count for the group yet (created or moved at an " +
        "id other than 0 or the stream's end); entries were added after last-delivered id " +
        "1001-0; 0 pending, 0 due",
    );
  });
});

describe("judgeGroup: seen means within the window", () => {
  // Rounds that took 100 s each (a slow Redis): the consumer's last read attempt was at -10 s.
  const dead = (s: number): ReadableSample =>
    at(s, { lag: 5, minConsumerIdleMs: (s + 10) * 1000, entriesRead: 100 });
  const sixty: JudgeSettings = { ...reported, seenWithinMs: 60_000 };

  it("STOP, not STALL, once the latest read attempt is older than the window", () => {
    const verdict = judgeGroup([dead(0), dead(100), dead(200)], sixty);
    expect(verdict.status).toBe("STOP");
    expect(verdict.reason).toBe(
      "work waits (lag 5, 0 due pending) and no consumer read in 60s " +
        "(1 consumers, latest read attempt 210s ago)",
    );
  });

  it("never says consumers were seen at an attempt older than the window", () => {
    // The only consumer read at 0 s and died; the latest sample is taken at `last` s.
    for (let last = 20; last <= 300; last += 5) {
      const samples = [last - 20, last - 10, last].map((s) =>
        at(s, { lag: 5, minConsumerIdleMs: s * 1000 }),
      );
      const verdict = judgeGroup(samples, sixty);
      const ago = /latest read attempt ([\d.]+)s ago/u.exec(verdict.reason)?.[1];
      if (verdict.status === "STALL") expect(Number(ago), `at ${last}s`).toBeLessThan(60);
      else expect(verdict.status, `at ${last}s`).toBe("STOP");
    }
  });

  it("STALL names the latest attempt of the whole window, not only the latest sample's", () => {
    // The consumer read at 15 s and was deleted (XGROUP DELCONSUMER); another one idles.
    const samples = [
      at(0, { lag: 5, minConsumerIdleMs: 50_000 }),
      at(20, { lag: 5, minConsumerIdleMs: 5000 }),
      at(30, { lag: 5, minConsumerIdleMs: 80_000 }),
    ];
    const verdict = judgeGroup(samples, sixty);
    expect(verdict.status).toBe("STALL");
    expect(verdict.reason).toContain("while consumers were seen (latest read attempt 15s ago)");
  });
});

describe("judgeGroup: a monitor group's entry delivered past maxDeliveries", () => {
  // monitor never claims: nothing dead-letters the entry, so the status must name it.
  const over = { id: "1732-0", deliveries: 9, maxDeliveries: 5 };

  it("WARN naming the entry where the group would be OK", () => {
    const sample = { pending: 1, overDelivered: over };
    const verdict = judgeGroup([at(0, sample), at(10, sample)], reported);
    expect(verdict).toEqual({
      status: "WARN",
      reason:
        "entry 1732-0 delivered 9 times, maxDeliveries 5 (action monitor: the janitor leaves " +
        "it pending); lag 0, 1 pending, 0 due over 10s",
    });
  });

  it("a worse status keeps its verdict and names the entry too", () => {
    const stuck = { pending: 1, due: 1, oldestPendingIdleMs: 40_000, overDelivered: over };
    const verdict = judgeGroup([at(0, stuck), at(10, stuck)], reported);
    expect(verdict.status).toBe("STUCK");
    expect(verdict.reason).toMatch(
      /; entry 1732-0 delivered 9 times, maxDeliveries 5 \(action monitor: the janitor leaves it pending\)$/u,
    );
  });

  it("not while the window has one sample", () => {
    const verdict = judgeGroup([at(0, { pending: 1, overDelivered: over })], reported);
    expect(verdict).toMatchObject({ status: "UNKNOWN", provisional: true });
  });
});
