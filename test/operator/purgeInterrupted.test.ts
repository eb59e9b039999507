import { describe, expect, it } from "vitest";
import { purgeDeadLetters } from "../../src/operations/purgeDeadLetters.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { addDeadLetters } from "./deadLetterFixtures.js";

const fixture = useRedisServer();

describe("dlq purge interrupted", () => {
  it("stops at the page boundary after the signal and reports what it purged", async () => {
    const stream = uniquePrefix("purge-stop");
    const group = groupConfig(stream);
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: group.deadLetterStream,
      count: 30,
    });
    const stop = new AbortController();
    stop.abort();
    const summary = await purgeDeadLetters(registerScripts(fixture.redis), group, {
      olderThanMs: undefined,
      reason: undefined,
      dryRun: false,
      pageSize: 10,
      signal: stop.signal,
    });
    // The page in flight when the signal came is finished (one script), the rest is left.
    expect(summary).toEqual({ purged: 10, remaining: 20, dryRun: false });
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(20);
  });
});
