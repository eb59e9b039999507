import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { createTestRefresher, gaugeValue } from "./refresherHarness.js";

const fixture = useRedisServer();

const ENTRY_BYTES = 4 * 1024 * 1024;

/** Bytes the server has written to all its clients so far (INFO stats). */
async function netOutputBytes(redis: Redis): Promise<number> {
  const info = await redis.info("stats");
  return Number(/^total_net_output_bytes:(\d+)/mu.exec(info)?.[1]);
}

describe("a scrape", () => {
  it("moves no entry body, whatever the size of the entries", async () => {
    const stream = uniquePrefix("big");
    const labels = { stream, group: "workers" };
    const body = Buffer.alloc(ENTRY_BYTES, 120);
    // Big entries everywhere a scrape could look: the stream's first and last entry, the first
    // entry not yet delivered to the group, and the oldest pending entry.
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    await fixture.redis.xadd(stream, "*", "body", body);
    await fixture.redis.call(
      "XREADGROUP",
      "GROUP",
      "workers",
      "c",
      "COUNT",
      1,
      "STREAMS",
      stream,
      ">",
    );
    await fixture.redis.xadd(stream, "*", "body", body);
    await fixture.redis.xadd(stream, "*", "body", body);
    const { refresher, metrics } = createTestRefresher(fixture.redis, [groupConfig(stream)]);

    // The INFO reply itself is counted too: measure it alone first.
    const infoAlone =
      -(await netOutputBytes(fixture.redis)) + (await netOutputBytes(fixture.redis));
    const before = await netOutputBytes(fixture.redis);
    await refresher.refresh();
    const moved = (await netOutputBytes(fixture.redis)) - before - infoAlone;

    expect(moved).toBeLessThan(16 * 1024);
    expect(await gaugeValue(metrics.pendingEntries, labels)).toBe(1);
    expect(await gaugeValue(metrics.lagEntries, labels)).toBe(2);
    expect(await gaugeValue(metrics.streamLengthEntries, { stream })).toBe(3);
    expect(await gaugeValue(metrics.groupReadable, labels)).toBe(1);
  });
});
