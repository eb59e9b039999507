import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  expectConfigError,
  loadContent,
  makeTempDir,
  validated,
  withGroup,
  type TempDir,
} from "./configFiles.js";

describe("backoffMs and backoffJitter", () => {
  let dir: TempDir;
  beforeAll(async () => {
    dir = await makeTempDir();
  });
  afterAll(async () => {
    await dir.remove();
  });

  it("reads a list of durations with units, per group and per discover pattern", async () => {
    const config = await loadContent(
      dir,
      [
        "groups: [{ stream: s, group: g, backoffMs: [1s, 10s, 1m, 600000], backoffJitter: 0.2 }]",
        'discover: [{ match: "tenant:*", backoffMs: [500ms, 2h] }]',
      ].join("\n"),
    );
    expect(config.groups[0]).toMatchObject({
      backoffMs: [1000, 10_000, 60_000, 600_000],
      backoffJitter: 0.2,
    });
    expect(config.discover[0]).toMatchObject({ backoffMs: [500, 7_200_000], backoffJitter: 0 });
  });

  it("defaults to no backoff", async () => {
    const config = await validated(withGroup({}));
    expect(config.groups[0]).toMatchObject({ backoffMs: [], backoffJitter: 0 });
  });

  it("refuses a bad list or a jitter outside 0..0.5, naming the key", async () => {
    // The value as reported: the items that were durations already read as milliseconds.
    await expectConfigError(validated(withGroup({ backoffMs: ["1s", "soon"] })), {
      key: "groups[0].backoffMs",
      value: [1000, "soon"],
      expected:
        "a list of at most 100 durations, each an integer number of milliseconds between 1 and 2147483647, or the same with a unit (500ms, 30s, 5m, 2h, 7d)",
    });
    await expectConfigError(validated(withGroup({ backoffJitter: 0.6 })), {
      key: "groups[0].backoffJitter",
      value: 0.6,
      expected: "a number between 0 and 0.5 (used in steps of 0.001)",
    });
  });
});
