import { describe, expect, it } from "vitest";
import { expectConfigError, validated, withGroup } from "./configFiles.js";

describe("http.ui.historyMinutes", () => {
  it("defaults to an hour, and 0 turns the history off", async () => {
    expect((await validated(withGroup({}))).http.ui.historyMinutes).toBe(60);
    const off = await validated({ ...withGroup({}), http: { ui: { historyMinutes: 0 } } });
    expect(off.http.ui.historyMinutes).toBe(0);
  });

  it("refuses a value that is not a whole number of minutes up to 6 hours, naming the key", async () => {
    for (const value of [-1, 361, 1.5, "1h"]) {
      await expectConfigError(
        validated({ ...withGroup({}), http: { ui: { historyMinutes: value } } }),
        { key: "http.ui.historyMinutes", value, expected: "an integer between 0 and 360" },
      );
    }
  });
});
