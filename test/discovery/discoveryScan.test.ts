import { Redis } from "ioredis";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import { GroupSet } from "../../src/core/GroupSet.js";
import { Discovery } from "../../src/discovery/Discovery.js";
import { discoverGroups, scanDiscoverPatterns } from "../../src/discovery/discoverGroups.js";
import { checkHasWork } from "../../src/config/checkHasWork.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { discoveryConfig, pattern, warnLogger } from "./discoveryHarness.js";

const fixture = useRedisServer();
const extraClients: Redis[] = [];
afterAll(() => {
  for (const client of extraClients) client.disconnect();
});

async function groupOn(redis: Redis, stream: string, group: string): Promise<void> {
  await redis.xgroup("CREATE", stream, group, "$", "MKSTREAM");
}

describe("discovery scan", () => {
  it("caps discovered groups: a warning naming the pattern, a counter, the same first groups at every scan", async () => {
    const prefix = uniquePrefix("cap");
    const streams = Array.from({ length: 8 }, (_, i) => `${prefix}:t:${i}`);
    // Created in an order unrelated to their names: what is kept must not depend on it.
    for (const stream of [...streams].reverse()) await groupOn(fixture.redis, stream, "workers");
    const config = discoveryConfig(fixture.server.url, prefix, [pattern(`${prefix}:t:*`)], {
      maxGroups: 5,
    });
    const groupSet = new GroupSet();
    const registry = new Registry();
    const { logger, lines } = warnLogger();
    const discovery = new Discovery({
      nodes: () => [fixture.redis],
      groupSet,
      config,
      logger,
      registry,
    });
    const kept = streams.slice(0, 5).map((stream) => `${stream}/workers`);

    await discovery.discoverOnce();
    expect(groupSet.current().map((group) => group.id)).toEqual(kept);
    const warning = lines.find((line) => String(line.msg).includes("discovery.maxGroups"));
    expect(warning?.msg).toContain(`${prefix}:t:*`);
    expect(warning?.patterns).toEqual({ [`${prefix}:t:*`]: 3 });

    // A new stream sorting last does not displace anything; the kept set does not move.
    await groupOn(fixture.redis, `${prefix}:t:9`, "workers");
    await discovery.discoverOnce();
    expect(groupSet.current().map((group) => group.id)).toEqual(kept);
    const text = await registry.metrics();
    expect(text).toContain(
      `stream_janitor_discovery_groups_over_cap_total{pattern="${prefix}:t:*"} 7`,
    );
    expect(text).toContain("stream_janitor_discovered_groups 5");
    await discovery.stop();
  });

  it("filters group names with the pattern's glob and gives each group the pattern's settings", async () => {
    const prefix = uniquePrefix("groups");
    await groupOn(fixture.redis, `${prefix}:s`, "billing-v1");
    await groupOn(fixture.redis, `${prefix}:s`, "billing-v2");
    await groupOn(fixture.redis, `${prefix}:s`, "analytics");
    // Not a stream: SCAN ... TYPE stream never returns it.
    await fixture.redis.set(`${prefix}:string`, "x");
    const config = discoveryConfig(fixture.server.url, prefix, [
      pattern(`${prefix}:*`, { groups: "billing-v[0-9]", action: "reassign", maxDeliveries: 9 }),
    ]);
    const groups = await discoverGroups(fixture.redis, config);
    expect(groups.map((group) => [group.id, group.action, group.maxDeliveries])).toEqual([
      [`${prefix}:s/billing-v1`, "reassign", 9],
      [`${prefix}:s/billing-v2`, "reassign", 9],
    ]);
    expect(groups[0]?.deadLetterStream).toBe(`{${prefix}:s}:dead`);
  });

  it("never takes the advisory events stream as a source, even when a pattern matches it", async () => {
    const prefix = uniquePrefix("events-stream");
    await groupOn(fixture.redis, `${prefix}:orders`, "workers");
    await groupOn(fixture.redis, `${prefix}:events`, "readers");
    const config = {
      ...discoveryConfig(fixture.server.url, prefix, [pattern(`${prefix}:*`)]),
      events: { stream: `${prefix}:events`, maxLen: 100 },
    };
    const groups = await discoverGroups(fixture.redis, config);
    expect(groups.map((group) => group.id)).toEqual([`${prefix}:orders/workers`]);
  });

  it("gives discovered groups the pattern's backoff", async () => {
    const prefix = uniquePrefix("backoff");
    await groupOn(fixture.redis, `${prefix}:s`, "workers");
    const config = discoveryConfig(fixture.server.url, prefix, [
      pattern(`${prefix}:*`, { backoffMs: [1000, 30_000], backoffJitter: 0.25 }),
    ]);
    const groups = await discoverGroups(fixture.redis, config);
    expect(groups.map((group) => [group.backoffMs, group.backoffJitter])).toEqual([
      [[1000, 30_000], 0.25],
    ]);
  });

  it("gives discovered groups the pattern's retry lane and never takes a lane for a source", async () => {
    const prefix = uniquePrefix("lanes");
    await groupOn(fixture.redis, `${prefix}:s`, "workers");
    // The lane, created by an earlier sweep: a stream with a group of the same name.
    await groupOn(fixture.redis, `{${prefix}:s}:workers:retry`, "workers");
    const config = discoveryConfig(fixture.server.url, prefix, [
      pattern(`*${prefix}:s*`, { retryLane: true }),
    ]);
    const groups = await discoverGroups(fixture.redis, config);
    expect(groups.map((group) => [group.id, group.retryLaneStream])).toEqual([
      [`${prefix}:s/workers`, `{${prefix}:s}:workers:retry`],
    ]);
  });

  it("returns listed groups first and lets the first matching pattern win", async () => {
    const prefix = uniquePrefix("order");
    await groupOn(fixture.redis, `${prefix}:a`, "workers");
    await groupOn(fixture.redis, `${prefix}:b`, "workers");
    const config = discoveryConfig(
      fixture.server.url,
      prefix,
      [pattern(`${prefix}:a`, { action: "monitor" }), pattern(`${prefix}:*`)],
      {
        groups: [
          {
            stream: `${prefix}:listed`,
            group: "g",
            minIdleMs: 1,
            maxDeliveries: 1,
            action: "dead-letter",
            requeueStream: "",
            deadLetterStream: "",
            deadLetterMaxLen: 1,
          },
        ],
      },
    );
    const groups = await discoverGroups(fixture.redis, config);
    expect(groups.map((group) => [group.id, group.action])).toEqual([
      [`${prefix}:listed/g`, "dead-letter"],
      [`${prefix}:a/workers`, "monitor"],
      [`${prefix}:b/workers`, "requeue"],
    ]);
  });

  it("scans every node it is given (a Cluster's masters): here two databases stand for two masters", async () => {
    const prefix = uniquePrefix("nodes");
    const second = new Redis({ port: fixture.server.port, db: 1, protocol: 2 });
    extraClients.push(second);
    await groupOn(fixture.redis, `${prefix}:on-first`, "workers");
    await groupOn(second, `${prefix}:on-second`, "workers");
    const config = discoveryConfig(fixture.server.url, prefix, [pattern(`${prefix}:*`)]);
    const scan = await scanDiscoverPatterns(() => [fixture.redis, second], config);
    expect(scan.discovered.map((group) => group.id)).toEqual([
      `${prefix}:on-first/workers`,
      `${prefix}:on-second/workers`,
    ]);
  });

  it("keeps the last good list when a scan fails, and counts the failure", async () => {
    const prefix = uniquePrefix("failure");
    await groupOn(fixture.redis, `${prefix}:s`, "workers");
    const broken = new Redis({ port: fixture.server.port, protocol: 2, lazyConnect: true });
    extraClients.push(broken);
    let nodes: Redis[] = [fixture.redis];
    const groupSet = new GroupSet();
    const registry = new Registry();
    const discovery = new Discovery({
      nodes: () => nodes,
      groupSet,
      config: discoveryConfig(fixture.server.url, prefix, [pattern(`${prefix}:*`)]),
      logger: pino({ level: "silent" }),
      registry,
    });
    await discovery.discoverOnce();
    expect(groupSet.current()).toHaveLength(1);
    broken.disconnect();
    nodes = [broken];
    expect(await discovery.discoverOnce()).toBeUndefined();
    expect(groupSet.current()).toHaveLength(1);
    expect(await registry.metrics()).toContain("stream_janitor_discovery_scan_failures_total 1");
  });

  it("counts discover patterns as work for run and sweep", () => {
    const config = discoveryConfig(fixture.server.url, "x", [pattern("tenant:*")]);
    expect(() => checkHasWork(config)).not.toThrow();
    expect(() => checkHasWork({ ...config, discover: [] })).toThrow(/nothing to do/u);
  });
});
