import { describe, expect, it } from "vitest";
import { findDuplicateJsonKey } from "../../src/config/findDuplicateJsonKey.js";

describe("findDuplicateJsonKey", () => {
  it("finds a key given twice at any depth, with its path and both lines", () => {
    expect(findDuplicateJsonKey('{"log": {}, "log": {}}')).toEqual({
      path: "log",
      firstLine: 1,
      secondLine: 1,
    });
    expect(findDuplicateJsonKey('{"a": [1, {"b": [{}, {"c": 1,\n"c": 2}]}]}')).toEqual({
      path: "a[1].b[1].c",
      firstLine: 1,
      secondLine: 2,
    });
  });

  it("is not fooled by quotes, braces and commas inside strings, or equal keys in other objects", () => {
    const text = JSON.stringify({
      groups: [
        { stream: 'a"}], {"stream": "b', group: "g,\\" },
        { stream: "a", group: "g" },
      ],
      "x.y": { stream: "{[" },
    });
    expect(findDuplicateJsonKey(text)).toBeUndefined();
  });

  it("compares keys decoded, as JSON.parse does", () => {
    expect(findDuplicateJsonKey('{"group": 1, "gr\\u006fup": 2}')?.path).toBe("group");
  });
});
