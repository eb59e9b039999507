import { describe, expect, it } from "vitest";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { createTestRefresher, gaugeValue } from "./refresherHarness.js";

const fixture = useRedisServer();
const neverAborted = new AbortController().signal;

describe("stream_janitor_backlog_entries", () => {
  it("is lag plus due pending, and has no sample (never 0) while the lag is unknown", async () => {
    const stream = uniquePrefix("backlog");
    const labels = { stream, group: "workers" };
    // minIdleMs 1 h: two entries idle for two hours are due, one fresh entry is being worked on
    // (and stays so however slowly the machine runs the test; 1 s once did not, at load 22).
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2), {
      idleMs: 7_200_000,
    });
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1), { idleMs: 0 });
    for (let i = 0; i < 3; i += 1) await fixture.redis.xadd(stream, "*", "waiting", String(i));
    const { refresher, metrics } = createTestRefresher(fixture.redis, [
      groupConfig(stream, { minIdleMs: 3_600_000 }),
    ]);

    await refresher.scanOnce(neverAborted);
    await refresher.refresh();
    expect(await gaugeValue(metrics.lagEntries, labels)).toBe(3);
    expect(await gaugeValue(metrics.pendingDueEntries, labels)).toBe(2);
    expect(await gaugeValue(metrics.backlogEntries, labels)).toBe(5);

    // A trim and a deletion, then the group moved to an arbitrary id: Redis can no longer count
    // what the group has read, and reports lag as null. A backlog of 0 would scale the consumers
    // to zero. (XTRIM alone leaves no tombstone on 7.x, so Redis can still estimate the lag.)
    const [first] = (await fixture.redis.xrange(stream, "-", "+", "COUNT", 1))[0] ?? [];
    const [last] = (await fixture.redis.xrevrange(stream, "+", "-", "COUNT", 1))[0] ?? [];
    await fixture.redis.xtrim(stream, "MAXLEN", 4);
    await fixture.redis.xdel(stream, last ?? "0");
    await fixture.redis.xgroup("SETID", stream, "workers", first ?? "0");
    const info = (await fixture.redis.call("XINFO", "GROUPS", stream)) as unknown[][];
    expect(info[0]?.[info[0].indexOf("lag") + 1]).toBeNull();

    await refresher.scanOnce(neverAborted);
    await refresher.refresh();
    expect(await gaugeValue(metrics.lagValid, labels)).toBe(0);
    expect(await gaugeValue(metrics.pendingDueEntries, labels)).toBe(2);
    expect(await gaugeValue(metrics.backlogEntries, labels)).toBeUndefined();

    // Known again: the sample comes back.
    await fixture.redis.xgroup("SETID", stream, "workers", "$");
    await refresher.refresh();
    expect(await gaugeValue(metrics.backlogEntries, labels)).toBe(2);
  });
});
