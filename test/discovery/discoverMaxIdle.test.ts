import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { discoverGroups } from "../../src/discovery/discoverGroups.js";
import { loadContent, makeTempDir, type TempDir } from "../config/configFiles.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { discoveryConfig, pattern } from "./discoveryHarness.js";

const fixture = useRedisServer();

describe("deadLetterAfterIdleMs per group and per discover pattern", () => {
  let dir: TempDir;
  beforeAll(async () => {
    dir = await makeTempDir();
  });
  afterAll(async () => {
    await dir.remove();
  });

  it("takes a duration in groups and discover entries, default 0 (off)", async () => {
    const config = await loadContent(
      dir,
      [
        "groups:",
        "  - { stream: orders, group: billing, deadLetterAfterIdleMs: 2h }",
        "  - { stream: orders, group: audit }",
        "discover:",
        '  - { match: "tenant:*", deadLetterAfterIdleMs: 30m }',
        '  - { match: "other:*" }',
        "",
      ].join("\n"),
    );
    expect(config.groups.map((group) => group.deadLetterAfterIdleMs)).toEqual([7_200_000, 0]);
    expect(config.discover.map((entry) => entry.deadLetterAfterIdleMs)).toEqual([1_800_000, 0]);
  });

  it("gives discovered groups their pattern's deadLetterAfterIdleMs", async () => {
    const prefix = uniquePrefix("dlai-discover");
    await fixture.redis.xgroup("CREATE", `${prefix}:s`, "workers", "$", "MKSTREAM");
    const config = discoveryConfig(fixture.server.url, prefix, [
      pattern(`${prefix}:*`, { deadLetterAfterIdleMs: 86_400_000 }),
    ]);
    const groups = await discoverGroups(fixture.redis, config);
    expect(groups.map((group) => [group.id, group.deadLetterAfterIdleMs])).toEqual([
      [`${prefix}:s/workers`, 86_400_000],
    ]);
  });
});
