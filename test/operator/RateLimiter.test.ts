import { describe, expect, it } from "vitest";
import { RateLimiter } from "../../src/operations/RateLimiter.js";

function virtualLimiter(ratePerSecond: number) {
  const clock = { now: 0, slept: 0 };
  const limiter = new RateLimiter({
    ratePerSecond,
    now: () => clock.now,
    sleep: (ms) => {
      clock.now += ms;
      clock.slept += ms;
      return Promise.resolve();
    },
  });
  return { limiter, clock };
}

describe("RateLimiter", () => {
  it("grants at most the rate over time", async () => {
    const { limiter, clock } = virtualLimiter(1000);
    let granted = 0;
    while (granted < 10_000) granted += await limiter.acquire(500);
    // 10,000 entries at 1000/s, the first 100 (the burst) without waiting.
    expect(clock.now).toBeGreaterThanOrEqual(9_900);
    expect(clock.now).toBeLessThanOrEqual(10_000);
  });

  it("never grants more than asked or than the burst", async () => {
    const { limiter } = virtualLimiter(1000);
    expect(await limiter.acquire(30)).toBe(30);
    expect(await limiter.acquire(500)).toBe(70);
  });

  it("takes back what a page did not use", async () => {
    const { limiter, clock } = virtualLimiter(10);
    expect(await limiter.acquire(1)).toBe(1);
    limiter.refund(1);
    expect(await limiter.acquire(1)).toBe(1);
    expect(clock.slept).toBe(0);
    expect(await limiter.acquire(1)).toBe(1);
    expect(clock.slept).toBe(100);
  });

  it("is unlimited at rate 0", async () => {
    const { limiter, clock } = virtualLimiter(0);
    expect(await limiter.acquire(1_000_000)).toBe(1_000_000);
    expect(clock.slept).toBe(0);
  });

  it("rejects a negative rate", () => {
    expect(() => new RateLimiter({ ratePerSecond: -1 })).toThrow(RangeError);
  });
});
