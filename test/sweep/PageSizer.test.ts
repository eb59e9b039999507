import { describe, expect, it } from "vitest";
import { PageSizer } from "../../src/sweep/PageSizer.js";

/** A call that used its whole claim limit at `perClaimMs` per entry. */
function fullCall(sizer: PageSizer, perClaimMs: number) {
  const maxClaimed = sizer.maxClaimed;
  sizer.record({
    durationMs: maxClaimed * perClaimMs,
    claimMs: maxClaimed * perClaimMs,
    claimed: maxClaimed,
    maxClaimed,
    examined: maxClaimed,
  });
  return sizer.maxClaimed;
}

describe("PageSizer", () => {
  it("starts small and grows while full calls stay cheap, up to about 80 % of the budget", () => {
    const sizer = new PageSizer(1000, 2);
    expect(sizer.maxClaimed).toBe(64);
    const limits = [64];
    for (let call = 0; call < 8; call += 1) limits.push(fullCall(sizer, 0.006));
    expect(limits.slice(0, 4)).toEqual([64, 128, 256, 266]);
    expect(limits.at(-1)).toBe(266); // floor(0.8 * 2 / 0.006)
  });

  it("never exceeds batchSize", () => {
    const sizer = new PageSizer(100, 2);
    for (let call = 0; call < 10; call += 1) fullCall(sizer, 0.0001);
    expect(sizer.maxClaimed).toBe(100);
  });

  it("shrinks at once after a call over the budget (huge entries), down to one entry", () => {
    const sizer = new PageSizer(1000, 2);
    for (let call = 0; call < 4; call += 1) fullCall(sizer, 0.006);
    expect(fullCall(sizer, 0.1)).toBe(16); // floor(1.6 / 0.1)
    expect(fullCall(sizer, 50)).toBe(1);
    expect(fullCall(sizer, 50)).toBe(1);
  });

  it("grows back once entries are cheap again", () => {
    const sizer = new PageSizer(1000, 2);
    fullCall(sizer, 50);
    expect(sizer.maxClaimed).toBe(1);
    const limits = [];
    for (let call = 0; call < 12; call += 1) limits.push(fullCall(sizer, 0.006));
    expect(limits.slice(0, 3)).toEqual([2, 4, 8]);
    expect(limits.at(-1)).toBe(266);
  });

  it("leaves the limit alone after calls that claimed little (time went into looking at the PEL)", () => {
    const sizer = new PageSizer(1000, 2);
    sizer.record({ durationMs: 2.5, claimMs: 0, claimed: 0, maxClaimed: 64, examined: 3000 });
    expect(sizer.maxClaimed).toBe(64);
    sizer.record({ durationMs: 1.9, claimMs: 0.03, claimed: 3, maxClaimed: 64, examined: 2800 });
    expect(sizer.maxClaimed).toBe(64);
  });

  it("keeps the limit when a sparse call ran over the budget reading the PEL, not claiming", () => {
    // A mostly fresh PEL: 7 claims of 10 µs in a call that spent 2.2 ms reading 3,000 entries.
    // Charging the whole call to its claims (0.3 ms each) would cut the limit to 5, and every
    // later call would stop at its sixth idle entry.
    const sizer = new PageSizer(1000, 2);
    for (let call = 0; call < 20; call += 1) {
      sizer.record({ durationMs: 2.2, claimMs: 0.07, claimed: 7, maxClaimed: 64, examined: 3000 });
    }
    expect(sizer.maxClaimed).toBe(64);
    // Claims that do not fit still shrink it at once, whatever else the call did.
    sizer.record({ durationMs: 2.2, claimMs: 1.4, claimed: 7, maxClaimed: 64, examined: 3000 });
    expect(sizer.maxClaimed).toBe(8); // floor(0.8 * 2 / 0.2)
  });

  it("starts the next call with a window of half what the last one looked at, at least the limit", () => {
    const sizer = new PageSizer(1000, 2);
    expect(sizer.firstWindow).toBe(64);
    sizer.record({ durationMs: 1.9, claimMs: 0.03, claimed: 3, maxClaimed: 64, examined: 2800 });
    expect(sizer.firstWindow).toBe(1400);
    sizer.record({ durationMs: 1.9, claimMs: 0.03, claimed: 3, maxClaimed: 64, examined: 50_000 });
    expect(sizer.firstWindow).toBe(10_000);
    sizer.record({ durationMs: 0.5, claimMs: 0.4, claimed: 64, maxClaimed: 64, examined: 64 });
    expect(sizer.firstWindow).toBe(128);
  });
});
