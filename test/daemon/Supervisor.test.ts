import { pino } from "pino";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { Supervisor } from "../../src/daemon/Supervisor.js";
import type { LeaderTerm } from "../../src/lease/types.js";
import { createJanitorMetrics } from "../../src/metrics/janitorMetrics.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { waitFor } from "../support/waitFor.js";

const fixture = useRedisServer();

/** A term whose fence Redis holds, as the lease would leave it. */
async function heldTerm(stream: string): Promise<LeaderTerm & { end: () => void }> {
  const controller = new AbortController();
  await fixture.redis.set(`${stream}:lease`, "me");
  return {
    signal: controller.signal,
    fence: { key: `${stream}:lease`, value: "me" },
    fencingToken: 1,
    end: () => controller.abort(),
  };
}

function supervisor(stream: string, term: () => LeaderTerm | undefined, intervalMs = 60_000) {
  const metrics = createJanitorMetrics(new Registry(), "test");
  return {
    metrics,
    supervisor: new Supervisor({
      groups: [groupConfig(stream)],
      redis: registerScripts(fixture.redis),
      logger: pino({ level: "silent" }),
      metrics,
      intervalMs,
      batchSize: 100,
      maxScriptMs: 2,
      maxEntriesPerGroup: 100_000,
      consumerName: "stream-janitor",
      currentTerm: term,
    }),
  };
}

describe("Supervisor", () => {
  it("does nothing on a standby", async () => {
    const { supervisor: standby } = supervisor(uniquePrefix("standby"), () => undefined);
    await expect(standby.supervise()).resolves.toBeUndefined();
  });

  it("joins a pass in flight instead of starting a second one, and counts on the leader", async () => {
    const stream = uniquePrefix("join");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(500));
    const term = await heldTerm(stream);
    const { supervisor: leader, metrics } = supervisor(stream, () => term);
    const first = leader.supervise();
    const second = leader.supervise();
    expect(second).toBe(first);
    const [result] = (await first) ?? [];
    expect(result).toMatchObject({ claimed: 500, requeued: 500 });
    const claimed = await metrics.claimedEntries.get();
    expect(claimed.values[0]?.value).toBe(500);
  });

  it("stops its loop: after stop() nothing is scheduled or running, and stop() is idempotent", async () => {
    const stream = uniquePrefix("loop");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(10));
    const term = await heldTerm(stream);
    const { supervisor: loop, metrics } = supervisor(stream, () => term, 5);
    loop.start();
    loop.start();
    await waitFor(async () => ((await metrics.sweeps.get()).values[0]?.value ?? 0) >= 3, {
      what: "three passes",
    });
    expect(loop.active).toBe(true);
    await Promise.all([loop.stop(), loop.stop()]);
    expect(loop.active).toBe(false);
    loop.start(); // a stopped supervisor stays stopped
    expect(loop.active).toBe(false);
  });

  it("starts no pass for a term that has ended", async () => {
    const stream = uniquePrefix("term-ends");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1000));
    const term = await heldTerm(stream);
    const { supervisor: leader } = supervisor(stream, () => term);
    term.end();
    const results = await leader.supervise(term);
    expect(results).toBeUndefined();
  });
});
