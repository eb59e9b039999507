import { describe, expect, it } from "vitest";
import { MinuteRings } from "../../src/status/MinuteRings.js";

const T0 = 1_700_000_000_000 - (1_700_000_000_000 % 60_000);
const minute = (n: number): number => T0 + n * 60_000;
const list = (points: Float32Array | undefined): (number | null)[] =>
  [...(points ?? [])].map((v) => (Number.isNaN(v) ? null : v));

describe("MinuteRings", () => {
  it("keeps the last known value of each minute, oldest first, NaN where nothing is known", () => {
    const rings = new MinuteRings(2, 4);
    rings.set("a", 0, minute(0), 5);
    rings.set("a", 0, minute(0) + 30_000, 7);
    rings.set("a", 0, minute(0) + 45_000, Number.NaN);
    rings.set("a", 0, minute(2), 9);
    expect(list(rings.read("a", 0, minute(2)))).toEqual([null, 7, null, 9]);
    expect(list(rings.read("a", 1, minute(2)))).toEqual([null, null, null, null]);
    expect(rings.read("b", 0, minute(2))).toBeUndefined();
  });

  it("adds counts per minute, starting an unknown minute at 0", () => {
    const rings = new MinuteRings(1, 3);
    rings.add("a", 0, minute(5), 0);
    rings.add("a", 0, minute(6), 4);
    rings.add("a", 0, minute(6) + 59_999, 2);
    expect(list(rings.read("a", 0, minute(7)))).toEqual([0, 6, null]);
  });

  it("wraps around: a later minute clears the minutes skipped, older points fall out", () => {
    const rings = new MinuteRings(1, 3);
    for (let m = 0; m < 3; m += 1) rings.set("a", 0, minute(m), m + 1);
    expect(list(rings.read("a", 0, minute(2)))).toEqual([1, 2, 3]);
    rings.set("a", 0, minute(4), 50);
    // Minute 3 was never written: not the value minute 0 left in its slot.
    expect(list(rings.read("a", 0, minute(4)))).toEqual([3, null, 50]);
    rings.set("a", 0, minute(100), 8);
    expect(list(rings.read("a", 0, minute(100)))).toEqual([null, null, 8]);
    // Older than the window: dropped, the newer minutes untouched.
    rings.set("a", 0, minute(97), 1);
    expect(list(rings.read("a", 0, minute(100)))).toEqual([null, null, 8]);
    // A late point inside the window lands in its own minute.
    rings.add("a", 0, minute(99), 3);
    expect(list(rings.read("a", 0, minute(100)))).toEqual([null, 3, 8]);
  });

  it("says since when a key is kept, at most the window", () => {
    const rings = new MinuteRings(1, 60);
    rings.set("a", 0, minute(10) + 5_000, 1);
    expect(rings.sinceMs("a")).toBe(minute(10));
    rings.set("a", 0, minute(200), 1);
    expect(rings.sinceMs("a")).toBe(minute(141));
    expect(rings.sinceMs("b")).toBeUndefined();
  });

  it("frees the rings of keys that went away, and counts its bytes", () => {
    const rings = new MinuteRings(7, 60);
    rings.set("a", 0, minute(0), 1);
    rings.set("b", 0, minute(0), 1);
    expect(rings.pointBytes()).toBe(2 * 7 * 60 * 4);
    rings.keepOnly(new Set(["b"]));
    expect(rings.size).toBe(1);
    expect(rings.read("a", 0, minute(0))).toBeUndefined();
    expect(list(rings.read("b", 0, minute(0))).at(-1)).toBe(1);
  });

  it("refuses a shape that keeps nothing", () => {
    expect(() => new MinuteRings(0, 60)).toThrow("series must be >= 1: 0");
    expect(() => new MinuteRings(7, 0)).toThrow("minutes must be >= 1: 0");
  });
});
