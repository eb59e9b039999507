import { describe, expect, it } from "vitest";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import { expectExactlyOnce } from "../support/expectExactlyOnce.js";
import { addStuckEntries, numberedBodies, pendingEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";

const fixture = useRedisServer();

describe("sparse PELs", () => {
  it("sweeps 20,000 pending entries with 200 idle ones spread evenly in at most 25 script calls", async () => {
    const stream = uniquePrefix("sparse");
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(20_000), {
      consumer: "busy",
      idleMs: 0,
    });
    const stuck = ids.filter((_, i) => i % 100 === 50);
    for (let i = 0; i < stuck.length; i += 100) {
      const chunk = stuck.slice(i, i + 100);
      await fixture.redis.call(
        "XCLAIM",
        stream,
        "workers",
        "crashed",
        0,
        ...chunk,
        "IDLE",
        3_600_000,
        "JUSTID",
      );
    }
    const group = groupConfig(stream, { minIdleMs: 60_000 });

    // The budget is generous so that a loaded test machine still fits; the call count is what
    // is asserted (npm run bench measures the default budget).
    const result = await sweepOnce(
      group,
      sweepContext(fixture.redis, { batchSize: 1000, maxScriptMs: 10 }),
      neverAborted,
    );

    expect(result).toMatchObject({
      examined: 20_000,
      claimed: 200,
      requeued: 200,
      complete: true,
    });
    expect(result.pages).toBeLessThanOrEqual(25);
    expect((await pendingEntries(fixture.redis, stream, "workers")).length).toBe(19_800);
    await expect(
      expectExactlyOnce(fixture.redis, {
        stream,
        group: "workers",
        deadLetterStream: group.deadLetterStream,
        originalIds: stuck,
      }),
    ).resolves.toEqual({ stillPending: 0, requeued: 200, deadLettered: 0 });
  });
});
