import { describe, expect, it } from "vitest";
import type { LeaderTerm } from "../../src/lease/types.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { waitFor } from "../support/waitFor.js";
import { useSweepWork } from "./janitorHarness.js";

const fixture = useRedisServer();
const sweepWork = useSweepWork(fixture);

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

/**
 * The supervisor `run` builds (createJanitor), its metrics counted as `run` counts them; it acts
 * under the janitor's lease, acquired here when `leading`.
 */
async function supervisor(stream: string, leading: boolean, intervalMs = 60_000) {
  const work = sweepWork(stream, [groupConfig(stream)], { sweep: { intervalMs } });
  if (leading) expect(await work.janitor.lease.tryAcquireOnce()).toBeDefined();
  return work;
}

describe("Supervisor", () => {
  it("does nothing on a standby", async () => {
    const { supervisor: standby } = await supervisor(uniquePrefix("standby"), false);
    await expect(standby.supervise()).resolves.toBeUndefined();
  });

  it("joins a pass in flight instead of starting a second one, and counts on the leader", async () => {
    const stream = uniquePrefix("join");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(500));
    const { supervisor: leader, metrics } = await supervisor(stream, true);
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
    const { supervisor: loop, metrics } = await supervisor(stream, true, 5);
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
    const { supervisor: leader } = await supervisor(stream, false);
    term.end();
    const results = await leader.supervise(term);
    expect(results).toBeUndefined();
  });
});
