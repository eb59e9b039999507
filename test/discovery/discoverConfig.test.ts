import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DURATION,
  expectConfigError,
  loadContent,
  makeTempDir,
  type TempDir,
} from "../config/configFiles.js";

describe("discover and discovery configuration", () => {
  let dir: TempDir;
  beforeAll(async () => {
    dir = await makeTempDir();
  });
  afterAll(async () => {
    await dir.remove();
  });
  const load = (content: object | string) => loadContent(dir, content);

  it("gives a pattern the defaults of a groups entry, and discovery its defaults", async () => {
    const config = await load(`discover:\n  - match: "tenant:*:events"\n`);
    expect(config.discover).toEqual([
      {
        match: "tenant:*:events",
        groups: "*",
        minIdleMs: 60000,
        maxDeliveries: 5,
        action: "requeue",
        requeueStream: "",
        deadLetterStream: "",
        deadLetterMaxLen: 0,
        retryLane: false,
        reapConsumersIdleMs: 0,
        backoffMs: [],
        backoffJitter: 0,
        deadLetterAfterIdleMs: 0,
      },
    ]);
    expect(config.discovery).toEqual({ intervalMs: 60000, maxGroups: 10000 });
  });

  it("requires match", async () => {
    await expectConfigError(load({ discover: [{ groups: "*" }] }), {
      key: "discover[0].match",
      value: undefined,
      expected: "a non-empty string (required)",
    });
  });

  it("rejects stream and group, which belong to groups entries", async () => {
    await expectConfigError(load({ discover: [{ match: "a*", stream: "a" }] }), {
      key: "discover[0].stream",
      value: "a",
      expected:
        "a known discover key: one of match, groups, minIdleMs, maxDeliveries, action, " +
        "requeueStream, deadLetterStream, deadLetterMaxLen, retryLane, reapConsumersIdleMs, " +
        "backoffMs, backoffJitter, deadLetterAfterIdleMs",
    });
  });

  it("validates the per-group settings as for groups", async () => {
    await expectConfigError(load({ discover: [{ match: "a*", action: "explode" }] }), {
      key: "discover[0].action",
      value: "explode",
      expected: "one of requeue, reassign, dead-letter, monitor",
    });
    await expectConfigError(load({ discover: [{ match: "a*", minIdleMs: 0 }] }), {
      key: "discover[0].minIdleMs",
      value: 0,
      expected: DURATION,
    });
  });

  it("rejects a pattern whose dead letters would go to its requeue stream", async () => {
    await expectConfigError(
      load({ discover: [{ match: "a*", requeueStream: "retry", deadLetterStream: "retry" }] }),
      {
        key: "discover[0].deadLetterStream",
        value: "retry",
        expected:
          "a stream other than the pattern's requeueStream (dead letters would be delivered again)",
      },
    );
  });

  it("validates discovery.intervalMs and discovery.maxGroups", async () => {
    await expectConfigError(load({ discovery: { intervalMs: 0 } }), {
      key: "discovery.intervalMs",
      value: 0,
      expected: DURATION,
    });
    await expectConfigError(load({ discovery: { maxGroups: -1 } }), {
      key: "discovery.maxGroups",
      value: -1,
      expected: "an integer >= 1",
    });
    await expectConfigError(load({ discover: { match: "a*" } }), {
      key: "discover",
      value: { match: "a*" },
      expected: "a list of discover patterns",
    });
  });
});
