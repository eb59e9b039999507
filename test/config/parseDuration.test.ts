import { describe, expect, it } from "vitest";
import { DURATION_FORM, parseDuration } from "../../src/config/parseDuration.js";

describe("parseDuration", () => {
  it.each([
    ["500ms", 500],
    ["30s", 30_000],
    ["5m", 300_000],
    ["2h", 7_200_000],
    ["7d", 604_800_000],
    ["1500", 1500],
    ["0", 0],
    [1500, 1500],
    [0, 0],
  ])("reads %j as %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([["5x"], [""], ["1.5s"], ["-3s"], [" 5s"], ["5 s"], ["s"], [1.5], [-1], [true], [null]])(
    "refuses %j",
    (value) => {
      expect(parseDuration(value)).toBeUndefined();
    },
  );

  it("refuses what is beyond a safe integer of milliseconds", () => {
    expect(parseDuration("99999999999999999d")).toBeUndefined();
  });

  it("names the accepted forms", () => {
    for (const form of ["500ms", "30s", "5m", "2h", "7d", "milliseconds"])
      expect(DURATION_FORM).toContain(form);
  });
});
