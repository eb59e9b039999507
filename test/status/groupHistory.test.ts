import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { backlogOf } from "../../src/status/backlogOf.js";
import { GroupHistory } from "../../src/status/GroupHistory.js";
import type { ReadableSample } from "../../src/status/StatusSample.js";

const T0 = 1_700_000_040_000; // a minute's start
const ID = "orders/billing";

function sampleAt(minute: number, overrides: Partial<ReadableSample> = {}): ReadableSample {
  return {
    readable: true,
    atMs: T0 + minute * 60_000 + 15_000,
    lag: 10,
    pending: 4,
    due: 2,
    oldestPendingIdleMs: 1000,
    deadLetters: 3,
    retryLane: null,
    lastDeliveredId: "1-0",
    entriesRead: 5,
    consumerCount: 1,
    minConsumerIdleMs: 5,
    ...overrides,
  };
}

const sweep = (claimed: number, requeued: number, deadLettered: number) => ({
  stream: "orders",
  group: "billing",
  claimed,
  requeued,
  deadLettered,
});

const known = (points: Float32Array | undefined): (number | null)[] =>
  [...(points ?? [])].slice(-3).map((v) => (Number.isNaN(v) ? null : v));

describe("backlogOf", () => {
  it("adds lag and due, and the lane's lag and due copies; unknown while a lag is", () => {
    expect(backlogOf(sampleAt(0))).toBe(12);
    expect(backlogOf(sampleAt(0, { lag: null }))).toBeNull();
    expect(backlogOf(sampleAt(0, { retryLaneLag: 5, retryLaneDue: 1 }))).toBe(18);
    expect(backlogOf(sampleAt(0, { retryLaneLag: null, retryLaneDue: 1 }))).toBeNull();
  });
});

describe("GroupHistory", () => {
  it("records the levels of every sample, per minute, and leaves unknown ones out", () => {
    const history = new GroupHistory(60);
    history.recordSample(ID, sampleAt(0, { lag: 310 }), false);
    history.recordSample(ID, sampleAt(1, { lag: null, deadLetters: null }), false);
    history.recordSample(ID, { readable: false, atMs: T0 + 2 * 60_000, error: "gone" }, false);
    const end = T0 + 2 * 60_000;
    expect(known(history.seriesOf(ID, "lag", end))).toEqual([310, null, null]);
    expect(known(history.seriesOf(ID, "backlog", end))).toEqual([312, null, null]);
    expect(known(history.seriesOf(ID, "pending", end))).toEqual([4, 4, null]);
    expect(known(history.seriesOf(ID, "deadLetters", end))).toEqual([3, null, null]);
    // Standby: it does not sweep, so it knows no rate.
    expect(known(history.seriesOf(ID, "claimed", end))).toEqual([null, null, null]);
  });

  it("counts the leader's sweeps per minute; a minute sampled while leading starts at 0", () => {
    const history = new GroupHistory(60);
    const supervisor = new EventEmitter();
    history.follow(supervisor);
    history.recordSample(ID, sampleAt(0), true);
    supervisor.emit("group-swept", sweep(5, 4, 1), Date.now(), T0 + 20_000);
    supervisor.emit("group-failed", sweep(2, 0, 2), Date.now(), T0 + 40_000);
    history.recordSample(ID, sampleAt(1), true);
    supervisor.emit("group-swept", sweep(0, 0, 0), Date.now(), T0 + 2 * 60_000);
    const view = history.viewOf(ID, T0 + 2 * 60_000);
    expect(known(view?.series.claimed)).toEqual([7, 0, 0]);
    expect(known(view?.series.requeued)).toEqual([4, 0, 0]);
    expect(known(view?.series.deadLettered)).toEqual([3, 0, 0]);
    expect(view?.sinceMs).toBe(T0);
    expect(view?.minutes).toBe(60);
  });

  it("frees the rings of a group that went away", () => {
    const history = new GroupHistory(60);
    history.recordSample(ID, sampleAt(0), false);
    history.recordSample("orders/audit", sampleAt(0), false);
    expect(history.groups).toBe(2);
    history.keepOnly(new Set(["orders/audit"]));
    expect(history.groups).toBe(1);
    expect(history.viewOf(ID, T0)).toBeUndefined();
    expect(history.pointBytes()).toBe(7 * 60 * 4);
  });
});
