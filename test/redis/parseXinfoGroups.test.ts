import { describe, expect, it } from "vitest";
import { findGroup, parseXinfoGroupNames, parseXinfoGroups } from "../../src/redis/replies.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";

const fixture = useRedisServer();

// RESP2, as Redis 7.x answers XINFO GROUPS (lag is null after a deletion it cannot account for).
const REPLY = [
  [
    "name",
    "a",
    "consumers",
    2,
    "pending",
    5,
    "last-delivered-id",
    "9-1",
    "entries-read",
    7,
    "lag",
    0,
  ],
  [
    "name",
    "b",
    "consumers",
    0,
    "pending",
    0,
    "last-delivered-id",
    "0-0",
    "entries-read",
    null,
    "lag",
    null,
  ],
];

describe("the XINFO GROUPS parser (discovery, requeue check, retention and scrape all use it)", () => {
  it("reads every group in Redis' order, lag and entries-read kept null when unknown", () => {
    expect(parseXinfoGroups(REPLY)).toEqual([
      { name: "a", consumers: 2, pending: 5, lastDeliveredId: "9-1", entriesRead: 7, lag: 0 },
      { name: "b", consumers: 0, pending: 0, lastDeliveredId: "0-0", entriesRead: null, lag: null },
    ]);
    expect(parseXinfoGroupNames(REPLY)).toEqual(["a", "b"]);
    expect(findGroup(REPLY, "b")?.pending).toBe(0);
    expect(findGroup(REPLY, "c")).toBeUndefined();
    expect(parseXinfoGroupNames([])).toEqual([]);
  });

  it("throws on a reply of another shape instead of reporting no group", () => {
    expect(() => parseXinfoGroupNames("OK")).toThrow(/unexpected XINFO GROUPS reply/u);
    expect(() => parseXinfoGroupNames([["name", "a"]])).toThrow(/pending/u);
  });

  it("reads the server's own reply", async () => {
    const stream = uniquePrefix("xinfo");
    await fixture.redis.call("XGROUP", "CREATE", stream, "second", "$", "MKSTREAM");
    await fixture.redis.call("XGROUP", "CREATE", stream, "first", "$");
    const reply = await fixture.redis.call("XINFO", "GROUPS", stream);
    expect(parseXinfoGroupNames(reply).sort()).toEqual(["first", "second"]);
    expect(findGroup(reply, "first")).toMatchObject({ pending: 0, consumers: 0 });
  });
});
