import { describe, expect, it } from "vitest";
import { discoverGroups } from "../../src/discovery/discoverGroups.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { discoveryConfig, pattern } from "./discoveryHarness.js";

const fixture = useRedisServer();

describe("discovered groups keep every setting of their pattern", () => {
  it("gives discovered groups their pattern's reapConsumersIdleMs (reaping works for them)", async () => {
    const prefix = uniquePrefix("reap-discover");
    await fixture.redis.xgroup("CREATE", `${prefix}:s`, "workers", "$", "MKSTREAM");
    const config = discoveryConfig(fixture.server.url, prefix, [
      pattern(`${prefix}:*`, { reapConsumersIdleMs: 3_600_000 }),
    ]);
    const groups = await discoverGroups(fixture.redis, config);
    expect(groups.map((group) => [group.id, group.reapConsumersIdleMs])).toEqual([
      [`${prefix}:s/workers`, 3_600_000],
    ]);
  });
});
