import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { groupSchema } from "../../src/config/configSchema.js";
import { createJanitorMetrics } from "../../src/metrics/janitorMetrics.js";
import { recordSweep } from "../../src/daemon/recordSweep.js";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { captureLogger, groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";
import { gaugeValue } from "../metrics/refresherHarness.js";

const fixture = useRedisServer();

const DROPPED_MESSAGE = /dead letters dropped/u;

describe("deadLetterMaxLen: dead letters are never dropped silently", () => {
  it("keeps every dead letter with the default cap (0: never trimmed)", async () => {
    expect(groupSchema.deadLetterMaxLen.default).toBe(0);
    const stream = uniquePrefix("dl-uncapped");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1000));
    const group = groupConfig(stream, {
      action: "dead-letter",
      deadLetterMaxLen: groupSchema.deadLetterMaxLen.default,
    });
    const { logger, lines } = captureLogger();
    const result = await sweepOnce(group, sweepContext(fixture.redis, { logger }), neverAborted);
    expect(result).toMatchObject({ deadLettered: 1000, deadLettersDropped: 0 });
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(1000);
    expect(lines.filter((line) => DROPPED_MESSAGE.test(String(line.msg)))).toEqual([]);
  });

  it("counts every dead letter a cap drops, logs it at warn and exports it", async () => {
    const stream = uniquePrefix("dl-capped");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1000));
    const group = groupConfig(stream, { action: "dead-letter", deadLetterMaxLen: 100 });
    // Earlier dead letters of the stream count too: the cap drops the oldest first.
    await fixture.redis.xadd(group.deadLetterStream, "*", "earlier", "1");
    const { logger, lines } = captureLogger();
    // Small pages: the drops of many script calls add up.
    const context = sweepContext(fixture.redis, { logger, batchSize: 37 });
    const result = await sweepOnce(group, context, neverAborted);

    const length = await fixture.redis.xlen(group.deadLetterStream);
    expect(length).toBeGreaterThanOrEqual(100);
    expect(length).toBeLessThan(1001);
    // Exact: everything written that is not there any more was dropped by the cap.
    expect(result).toMatchObject({ deadLettered: 1000, deadLettersDropped: 1001 - length });

    const warning = lines.find((line) => DROPPED_MESSAGE.test(String(line.msg)));
    expect(warning).toMatchObject({
      level: 40,
      stream,
      group: "workers",
      count: 1001 - length,
      deadLetterStream: group.deadLetterStream,
      deadLetterMaxLen: 100,
    });

    const metrics = createJanitorMetrics(new Registry(), "test");
    recordSweep(metrics, result, 1_000_000);
    expect(await gaugeValue(metrics.deadLettersDropped, { stream, group: "workers" })).toBe(
      1001 - length,
    );
  });

  it("counts what the cap drops when entries are requeued and dead-lettered in one page", async () => {
    const stream = uniquePrefix("dl-capped-mixed");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(300), {
      deliveries: 5,
    });
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(300), {
      deliveries: 1,
    });
    const group = groupConfig(stream, { deadLetterMaxLen: 10 });
    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
    const length = await fixture.redis.xlen(group.deadLetterStream);
    expect(result).toMatchObject({ requeued: 300, deadLettered: 300 });
    expect(result.deadLettersDropped).toBe(300 - length);
    expect(result.deadLettersDropped).toBeGreaterThan(0);
  });
});
