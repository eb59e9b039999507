import { describe, expect, it } from "vitest";
import { downWithin, janitorTime, RECOVERY_BOUND_MS } from "./recovery.js";

/**
 * The recovery bound (leader lost -> next sweep within 30 s) counts the janitors' time only:
 * while Redis is down (killed, replaying its AOF) no janitor can sweep (pure logic).
 */
describe("the recovery bound", () => {
  it("counts from when Redis answers again: seed 31's leader kill, then a 40.4 s AOF replay", () => {
    // The leader killed at 324.4 s, Redis killed at 333.4 s and answering at 373.8 s.
    const spans = [{ down: 333_400, up: 373_800 }];
    expect(downWithin(spans, 324_400, 380_000)).toBe(40_400);
    // A sweep at 380 s: 55.6 s after the kill, 15.2 s of it the janitors'.
    expect(janitorTime(spans, 324_400, 380_000)).toBe(15_200);
    expect(janitorTime(spans, 324_400, 380_000)).toBeLessThan(RECOVERY_BOUND_MS);
    // With Redis up all along the same wait is over the bound.
    expect(janitorTime([], 324_400, 380_000)).toBeGreaterThan(RECOVERY_BOUND_MS);
  });

  it("counts only the downtime inside the wait, and a Redis still down stops the clock", () => {
    const spans = [
      { down: 1000, up: 5000 },
      { down: 20_000, up: undefined },
    ];
    // Before the fault, and after the sweep: not counted.
    expect(downWithin(spans, 3000, 4000)).toBe(1000);
    expect(downWithin(spans, 6000, 10_000)).toBe(0);
    // Down since 20 s and not answering yet: the janitors' clock stands still at 14 s.
    expect(janitorTime(spans, 6000, 50_000)).toBe(14_000);
    expect(janitorTime(spans, 6000, 90_000)).toBe(14_000);
  });
});
