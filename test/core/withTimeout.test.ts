import { describe, expect, it } from "vitest";
import type { Timers } from "../../src/core/timers.js";
import { withTimeout } from "../../src/core/withTimeout.js";

/** Timers driven by hand: `fire()` runs the pending ones, `pending` counts what is left behind. */
function handTimers() {
  const timers = new Map<number, () => void>();
  let next = 0;
  const clock: Timers & { fire(): void; readonly pending: number; delays: number[] } = {
    delays: [],
    setTimeout(callback, ms) {
      next += 1;
      timers.set(next, callback);
      clock.delays.push(ms);
      return next;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    fire() {
      for (const [handle, callback] of [...timers]) {
        timers.delete(handle);
        callback();
      }
    },
    get pending() {
      return timers.size;
    },
  };
  return clock;
}

describe("withTimeout (the one race of a call against a timer)", () => {
  it("gives the call's answer and clears its timer", async () => {
    const timers = handTimers();
    await expect(withTimeout(Promise.resolve("OK"), 50, () => "late", timers)).resolves.toBe("OK");
    expect(timers.pending).toBe(0);
    expect(timers.delays).toEqual([50]);
  });

  it("passes the call's failure on and clears its timer", async () => {
    const timers = handTimers();
    const failing = withTimeout(Promise.reject(new Error("ERR x")), 50, () => "late", timers);
    await expect(failing).rejects.toThrow("ERR x");
    expect(timers.pending).toBe(0);
  });

  it("gives what onTimeout returns, or its throw, when time is up first", async () => {
    const timers = handTimers();
    const never = new Promise<string>(() => undefined);
    const resolved = withTimeout(never, 50, () => "ETIMEOUT", timers);
    timers.fire();
    await expect(resolved).resolves.toBe("ETIMEOUT");
    const rejected = withTimeout(
      never,
      50,
      () => {
        throw new Error("no reply within 50 ms");
      },
      timers,
    );
    timers.fire();
    await expect(rejected).rejects.toThrow("no reply within 50 ms");
    expect(timers.pending).toBe(0);
  });

  it("drops a failure that comes after the time is up (no unhandled rejection)", async () => {
    const timers = handTimers();
    let fail: (error: Error) => void = () => undefined;
    const late = new Promise<string>((_, reject) => {
      fail = reject;
    });
    const answer = withTimeout(late, 50, () => "timed out", timers);
    timers.fire();
    await expect(answer).resolves.toBe("timed out");
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    fail(new Error("ECONNRESET"));
    await new Promise((resolve) => setImmediate(resolve));
    process.off("unhandledRejection", onUnhandled);
    expect(unhandled).toEqual([]);
  });
});
