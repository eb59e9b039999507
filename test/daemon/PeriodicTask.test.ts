import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { PeriodicTask, type PeriodicTaskOptions } from "../../src/core/PeriodicTask.js";
import { JITTER_SHARE, withJitter } from "../../src/core/jitter.js";

/** A task whose rounds the test ends by hand, on vitest's fake timers. */
function task(overrides: Partial<PeriodicTaskOptions<void>> = {}) {
  const rounds: { end: () => void; fail: (error: Error) => void; signal: AbortSignal }[] = [];
  const errors: unknown[] = [];
  const periodic = new PeriodicTask<void>({
    run: (signal) =>
      new Promise<void>((resolve, reject) => {
        rounds.push({ end: resolve, fail: reject, signal });
      }),
    nextDelayMs: () => 1000,
    onError: (error) => errors.push(error),
    ...overrides,
  });
  return { periodic, rounds, errors };
}

const elapse = (ms: number) => vi.advanceTimersByTimeAsync(ms);

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  expect(vi.getTimerCount()).toBe(0);
  vi.useRealTimers();
});

describe("PeriodicTask", () => {
  it("goes idle -> running -> stopping -> stopped, and start() only works once", async () => {
    const { periodic, rounds } = task();
    expect(periodic.state).toBe("idle");
    periodic.start(0);
    periodic.start(0);
    expect(periodic.state).toBe("running");
    await elapse(0);
    expect(rounds).toHaveLength(1);
    const stopped = periodic.stop();
    expect(periodic.state).toBe("stopping");
    rounds[0]?.end();
    await stopped;
    expect(periodic.state).toBe("stopped");
    periodic.start(0);
    expect(periodic.state).toBe("stopped");
    expect(periodic.waiting).toBe(false);
  });

  it("waits the owner's delay after each round ends, never while it runs", async () => {
    const { periodic, rounds } = task();
    periodic.start(0);
    await elapse(0);
    // A round lasting longer than the interval: nothing else starts meanwhile.
    await elapse(5000);
    expect(rounds).toHaveLength(1);
    expect(periodic.waiting).toBe(false);
    rounds[0]?.end();
    await elapse(999);
    expect(rounds).toHaveLength(1);
    await elapse(1);
    expect(rounds).toHaveLength(2);
    rounds[1]?.end();
    await periodic.stop();
  });

  it("starts a round synchronously when its timer fires", () => {
    const { periodic, rounds } = task();
    periodic.start(10);
    vi.advanceTimersByTime(10);
    expect(rounds).toHaveLength(1);
    rounds[0]?.end();
    return periodic.stop();
  });

  it("reschedule() replaces the pending wait; undefined leaves none until the next call", async () => {
    const { periodic, rounds } = task({ nextDelayMs: () => undefined });
    periodic.start(undefined);
    expect(periodic.waiting).toBe(false);
    periodic.reschedule(500);
    periodic.reschedule(50);
    await elapse(50);
    expect(rounds).toHaveLength(1);
    rounds[0]?.end();
    await elapse(10_000);
    expect(rounds).toHaveLength(1);
    expect(periodic.waiting).toBe(false);
    await periodic.stop();
    periodic.reschedule(0);
    expect(periodic.waiting).toBe(false);
  });

  it("passes a failed round to onError and goes on", async () => {
    const { periodic, rounds, errors } = task();
    periodic.start(0);
    await elapse(0);
    rounds[0]?.fail(new Error("boom"));
    await elapse(1000);
    expect(errors).toMatchObject([{ message: "boom" }]);
    expect(rounds).toHaveLength(2);
    rounds[1]?.end();
    await periodic.stop();
  });

  it("stop() clears the pending timer and waits for the round in flight", async () => {
    const { periodic, rounds } = task();
    periodic.start(0);
    await elapse(0);
    rounds[0]?.end();
    await elapse(0);
    expect(periodic.waiting).toBe(true);
    await periodic.stop();
    expect(periodic.waiting).toBe(false);
    await elapse(5000);
    expect(rounds).toHaveLength(1);
  });
});

describe("PeriodicTask.runNow", () => {
  it("drops the pending wait and runs a round at once; busy while it runs", async () => {
    const { periodic, rounds } = task();
    periodic.runNow(); // idle: nothing
    expect(rounds).toHaveLength(0);
    periodic.start(60_000);
    periodic.runNow();
    expect(rounds).toHaveLength(1);
    expect(periodic.busy).toBe(true);
    expect(periodic.waiting).toBe(false);
    rounds[0]?.end();
    await elapse(0);
    expect(periodic.busy).toBe(false);
    expect(periodic.waiting).toBe(true);
    await periodic.stop();
  });
});

describe("PeriodicTask owns the round in flight, the stop signal and the timers", () => {
  it("hands every round one stop signal, aborted by stop() before it waits for the round", async () => {
    const { periodic, rounds } = task();
    periodic.start(0);
    await elapse(0);
    const signal = rounds[0]?.signal;
    expect(signal?.aborted).toBe(false);
    expect(periodic.signal).toBe(signal);
    const stopped = periodic.stop();
    expect(signal?.aborted).toBe(true);
    rounds[0]?.end();
    await stopped;
  });

  it("runOnce() runs a round off the timer; a call while one runs joins it, the timer too", async () => {
    const { periodic, rounds } = task();
    periodic.start(10);
    const first = periodic.runOnce();
    expect(periodic.runOnce()).toBe(first);
    expect(rounds).toHaveLength(1);
    expect(periodic.busy).toBe(true);
    // The timer fires while the direct round runs: it joins, and schedules the next wait after it.
    await elapse(10);
    expect(rounds).toHaveLength(1);
    expect(periodic.waiting).toBe(false);
    rounds[0]?.end();
    await first;
    expect(periodic.busy).toBe(false);
    await elapse(0);
    expect(periodic.waiting).toBe(true);
    // Once it ended, the next call runs a fresh round.
    const second = periodic.runOnce();
    expect(second).not.toBe(first);
    expect(rounds).toHaveLength(2);
    const stopped = periodic.stop();
    expect(periodic.state).toBe("stopping");
    rounds[1]?.end();
    await stopped;
    expect(periodic.state).toBe("stopped");
  });

  it("runOnce() rejects to its caller, not to onError", async () => {
    const { periodic, rounds, errors } = task();
    const round = periodic.runOnce();
    rounds[0]?.fail(new Error("direct"));
    await expect(round).rejects.toThrow("direct");
    expect(errors).toEqual([]);
  });

  it("with overlap 'queue', each runOnce() runs a fresh round after the ones before it", async () => {
    const { periodic, rounds } = task({ overlap: "queue" });
    const first = periodic.runOnce();
    const second = periodic.runOnce();
    expect(second).not.toBe(first);
    expect(rounds).toHaveLength(1);
    rounds[0]?.fail(new Error("first failed"));
    await expect(first).rejects.toThrow("first failed");
    expect(rounds).toHaveLength(2);
    rounds[1]?.end();
    await second;
    await periodic.stop();
  });

  it("tells when a round ended (round-done) and when the next waits (scheduled), so tests need no sleep", async () => {
    const { periodic, rounds } = task();
    const seen: string[] = [];
    periodic.on("round-done", (error) => seen.push(`done ${String(error)}`));
    periodic.on("scheduled", (delayMs) => seen.push(`scheduled ${delayMs}`));
    periodic.start(0);
    await elapse(0);
    rounds[0]?.fail(new Error("boom"));
    await elapse(0);
    const direct = periodic.runOnce();
    rounds[1]?.end();
    await direct;
    await elapse(0);
    expect(seen).toEqual(["scheduled 0", "done Error: boom", "scheduled 1000", "done undefined"]);
    await periodic.stop();
  });

  it("uses the timers it is given", async () => {
    vi.useRealTimers();
    const delays: number[] = [];
    const cleared: unknown[] = [];
    const { periodic } = task({
      timers: {
        setTimeout: (_callback, ms) => {
          delays.push(ms);
          return delays.length;
        },
        clearTimeout: (handle) => cleared.push(handle),
      },
    });
    periodic.start(250);
    await periodic.stop();
    expect(delays).toEqual([250]);
    expect(cleared).toEqual([1]);
    vi.useFakeTimers();
  });
});

describe("withJitter", () => {
  it("adds 0 to JITTER_SHARE of the wait", () => {
    expect(JITTER_SHARE).toBe(0.2);
    expect(withJitter(1000, () => 0)).toBe(1000);
    expect(withJitter(1000, () => 0.5)).toBe(1100);
    expect(withJitter(1000, () => 0.999)).toBeCloseTo(1199.8);
  });
});
