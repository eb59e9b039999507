import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { GroupSet } from "../../src/core/GroupSet.js";
import { Discovery } from "../../src/discovery/Discovery.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { discoveryConfig, pattern, warnLogger } from "./discoveryHarness.js";

const fixture = useRedisServer();

async function groupOn(stream: string, group: string): Promise<void> {
  await fixture.redis.xgroup("CREATE", stream, group, "$", "MKSTREAM");
}

describe("discovered groups never adopt a colliding role", () => {
  it("leaves out a group whose dead letters would land in a listed group's source, and says why", async () => {
    const prefix = uniquePrefix("roles");
    const tenant = `${prefix}:t:1`;
    // Listed: a group reading exactly the stream the tenant's dead letters default to.
    const listedSource = `{${tenant}}:dead`;
    await groupOn(listedSource, "auditors");
    await groupOn(tenant, "workers");
    const other = `${prefix}:t:2`;
    await groupOn(other, "workers");
    const config = discoveryConfig(fixture.server.url, prefix, [pattern(`${prefix}:t:*`)], {
      groups: [
        {
          stream: listedSource,
          group: "auditors",
          minIdleMs: 1000,
          maxDeliveries: 5,
          action: "monitor",
          requeueStream: "",
          deadLetterStream: "",
          deadLetterMaxLen: 100_000,
        },
      ],
    });
    const groupSet = new GroupSet();
    const { logger, lines } = warnLogger();
    const discovery = new Discovery({
      nodes: () => [fixture.redis],
      groupSet,
      config,
      logger,
      registry: new Registry(),
    });

    const scan = await discovery.discoverOnce();

    expect(groupSet.current().map((group) => group.id)).toEqual([
      `${listedSource}/auditors`,
      `${other}/workers`,
    ]);
    expect(scan?.refused.map((refused) => refused.id)).toEqual([`${tenant}/workers`]);
    const warning = lines.find((line) => String(line.msg).includes("left out"));
    expect(JSON.stringify(warning?.refused)).toContain("groups[0]'s source stream");
    await discovery.stop();
  });
});
