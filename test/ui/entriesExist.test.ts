import { describe, expect, it } from "vitest";
import {
  entriesExistArgs,
  MAX_IDS,
  parseEntriesExistReply,
  runEntriesExist,
} from "../../src/scripts/entriesExist.js";
import { loadScript, registerScripts } from "../../src/scripts/scriptedRedis.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";

const fixture = useRedisServer();

describe("entriesExist (the group page's ghost check)", () => {
  it("builds a bounded call and reads one flag per id", () => {
    expect(entriesExistArgs({ stream: "s", ids: ["1-0", "2-0"] })).toEqual([1, "s", "1-0", "2-0"]);
    const tooMany = Array.from({ length: MAX_IDS + 1 }, (_, i) => `${i}-0`);
    expect(() => entriesExistArgs({ stream: "s", ids: tooMany })).toThrow(/at most/u);
    expect(parseEntriesExistReply([1, 0], 2)).toEqual([true, false]);
    expect(() => parseEntriesExistReply([1], 2)).toThrow(/unexpected/u);
    expect(loadScript("entriesExist.lua").startsWith("#!lua flags=no-writes")).toBe(true);
  });

  it("tells deleted entries from present ones, and a missing stream holds none", async () => {
    const stream = `${uniquePrefix("exist")}:s`;
    const { redis } = fixture;
    const kept = await redis.xadd(stream, "*", "f", "v");
    const gone = await redis.xadd(stream, "*", "f", "v");
    await redis.xdel(stream, gone ?? "");
    const scripted = registerScripts(fixture.server.client());
    expect(await runEntriesExist(scripted, { stream, ids: [kept ?? "", gone ?? ""] })).toEqual([
      true,
      false,
    ]);
    expect(await runEntriesExist(scripted, { stream: `${stream}:none`, ids: ["1-0"] })).toEqual([
      false,
    ]);
  });
});
