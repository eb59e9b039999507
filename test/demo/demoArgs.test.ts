import { describe, expect, it } from "vitest";
import {
  DEFAULT_DEMO_DURATION_MS,
  DemoUsageError,
  parseDemoArgs,
} from "../../src/demo/demoArgs.js";

describe("parseDemoArgs", () => {
  it("runs the janitor in-process unless --janitor-url names one elsewhere", () => {
    expect(parseDemoArgs([])).toEqual({
      durationMs: DEFAULT_DEMO_DURATION_MS,
      janitorUrl: undefined,
      help: false,
    });
    expect(parseDemoArgs(["--janitor-url", "http://janitor:9478/"]).janitorUrl).toBe(
      "http://janitor:9478",
    );
  });

  it.each(["janitor:9478", "http://janitor:9478/metrics", ""])(
    "refuses --janitor-url %j",
    (url) => {
      expect(() => parseDemoArgs(["--janitor-url", url])).toThrow(DemoUsageError);
    },
  );
});
