import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { Maintenance } from "../../src/maintenance/Maintenance.js";
import { createMaintenanceMetrics } from "../../src/metrics/maintenanceMetrics.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { captureLogger } from "../support/sweepHarness.js";

const fixture = useRedisServer();

async function addEntries(stream: string, count: number): Promise<void> {
  const pipeline = fixture.redis.pipeline();
  for (let i = 0; i < count; i += 1) pipeline.xadd(stream, "*", "n", String(i));
  await pipeline.exec();
}

describe("retention held back, in the log", () => {
  it("is said when it starts and when it ends, not once per pass (the gauge holds it meanwhile)", async () => {
    const stream = uniquePrefix("retention-log");
    await addEntries(stream, 20);
    const held = await addStuckEntries(fixture.redis, stream, "legacy", numberedBodies(5));
    await addEntries(stream, 5);
    // legacy has read the tail too: once it acknowledges `held`, it holds nothing back.
    const tail = (await fixture.redis.call(
      "XREADGROUP",
      "GROUP",
      "legacy",
      "live",
      "STREAMS",
      stream,
      ">",
    )) as [string, [string, string[]][]][];
    await fixture.redis.xack(stream, "legacy", ...(tail[0]?.[1] ?? []).map(([id]) => id));
    const key = `${stream}:lease`;
    await fixture.redis.set(key, "me");
    const fence = { key, value: "me" };
    const signal = new AbortController().signal;
    const { logger, lines } = captureLogger();
    const maintenance = new Maintenance({
      redis: registerScripts(fixture.redis),
      logger,
      metrics: createMaintenanceMetrics(new Registry()),
      retention: [{ stream, maxLen: 3, maxAgeMs: 0 }],
      janitorConsumer: "stream-janitor",
      maxTrimmedPerPass: 100_000,
    });
    const heldBack = () => lines.filter((l) => String(l.msg).startsWith("retention held back"));
    const released = () => lines.filter((l) => String(l.msg).startsWith("retention proceeds"));

    for (let pass = 0; pass < 3; pass += 1) await maintenance.run([], [], fence, signal);
    expect(heldBack()).toHaveLength(1);
    expect(heldBack()[0]).toMatchObject({ stream, level: 40 });

    await fixture.redis.xack(stream, "legacy", ...held);
    for (let pass = 0; pass < 3; pass += 1) await maintenance.run([], [], fence, signal);
    expect(heldBack()).toHaveLength(1);
    expect(released()).toHaveLength(1);
    expect(released()[0]).toMatchObject({ stream, level: 30 });
  });
});
