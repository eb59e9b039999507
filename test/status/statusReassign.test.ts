import { describe, expect, it } from "vitest";
import { readGroupSnapshots } from "../../src/scrape/readGroupSnapshots.js";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import {
  groupConfig,
  JANITOR_CONSUMER,
  neverAborted,
  sweepContext,
} from "../support/sweepHarness.js";
import { waitFor } from "../support/waitFor.js";
import { createTestSampler } from "./statusHarness.js";

/**
 * The reassign action's XCLAIM to a consumer resets that consumer's XINFO CONSUMERS idle, as a
 * read would: the status must not take the janitor's hand-off for a sign that the consumer reads
 * (the sweep itself discounts it through the touches hash, and so does the status sample).
 */
const fixture = useRedisServer();
/** status.intervalMs x status.window: a consumer idle less than this counts as seen. */
const INTERVAL_MS = 200;
const WINDOW = 5;
const SEEN_WITHIN_MS = INTERVAL_MS * WINDOW;

async function redisNowMs(): Promise<number> {
  const [seconds, micros] = await fixture.redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

async function consumerIdleMs(stream: string, consumer: string): Promise<number> {
  const reply = (await fixture.redis.call("XINFO", "CONSUMERS", stream, "workers")) as unknown[][];
  const fields = reply.find((flat) => String(flat[1]) === consumer) ?? [];
  return Number(fields[5]);
}

describe("status and the reassign action", () => {
  it("STOP when the only consumer's last 'activity' is the janitor handing it entries", async () => {
    const stream = uniquePrefix("status-reassign");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3), {
      consumer: "crashed",
    });
    // A consumer that polled once, then stopped: live for the sweep (idle < minIdleMs), long
    // unseen for the status (idle >= the window), as Redis reports it.
    await fixture.redis.call("XREADGROUP", "GROUP", "workers", "worker", "STREAMS", stream, "0");
    await waitFor(async () => (await consumerIdleMs(stream, "worker")) >= SEEN_WITHIN_MS, {
      what: "the consumer to be idle past the status window",
    });
    // Work waits: entries nobody was given.
    for (let i = 0; i < 4; i += 1) await fixture.redis.xadd(stream, "*", "n", String(i));
    const group = groupConfig(stream, { action: "reassign", minIdleMs: 60_000 });

    const swept = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
    expect(swept).toMatchObject({ claimed: 3, reassigned: 3 });
    const test = createTestSampler(fixture.redis, [group], {
      intervalMs: INTERVAL_MS,
      window: WINDOW,
    });
    await test.sampler.sampleOnce();
    await test.sampler.sampleOnce();
    // The hand-off made the consumer look active: its idle restarted.
    expect(await consumerIdleMs(stream, "worker")).toBeLessThan(SEEN_WITHIN_MS);

    const verdict = test.sampler.statusOf(group.id);
    expect(verdict).toMatchObject({ status: "STOP" });
    expect(verdict?.reason).toMatch(/^work waits \(lag 4, /u);

    // Both read paths agree: the scripted one (one server) and the pipelined one (Cluster).
    const options = {
      timeoutMs: 2000,
      perConsumer: false,
      consumers: { janitorConsumer: JANITOR_CONSUMER },
    };
    for (const scripted of [true, false]) {
      const snapshot = await readGroupSnapshots(fixture.redis, [group], { ...options, scripted });
      const [reading] = snapshot.groups;
      expect(reading?.state === "ok" ? reading.values.activity : undefined).toMatchObject({
        consumerCount: 2,
        minConsumerIdleMs: expect.any(Number) as number,
      });
      const activity = reading?.state === "ok" ? reading.values.activity : undefined;
      // Only "crashed" counts as seen, and it has not read for as long as its entries idled.
      expect(activity?.minConsumerIdleMs ?? 0).toBeGreaterThanOrEqual(SEEN_WITHIN_MS);
    }
  });

  it("a consumer that reads after the hand-off is seen again", async () => {
    const stream = uniquePrefix("status-reassign-reads");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2), {
      consumer: "crashed",
    });
    await fixture.redis.call("XREADGROUP", "GROUP", "workers", "worker", "STREAMS", stream, "0");
    const group = groupConfig(stream, { action: "reassign", minIdleMs: 60_000 });
    expect(await sweepOnce(group, sweepContext(fixture.redis), neverAborted)).toMatchObject({
      reassigned: 2,
    });
    // The consumer reads its new entries, a little after the janitor's touch (Redis' clock: the
    // touch is recorded in ms, and a read in the same ms cannot be told from the hand-off).
    const touchedAt = Number(await fixture.redis.hget(group.touchesKey, "worker"));
    expect(touchedAt).toBeGreaterThan(0);
    await waitFor(async () => (await redisNowMs()) > touchedAt + 2, {
      what: "Redis' clock past the touch",
    });
    await fixture.redis.call("XREADGROUP", "GROUP", "workers", "worker", "STREAMS", stream, "0");
    for (const scripted of [true, false]) {
      const snapshot = await readGroupSnapshots(fixture.redis, [group], {
        timeoutMs: 2000,
        perConsumer: false,
        consumers: { janitorConsumer: JANITOR_CONSUMER },
        scripted,
      });
      const [reading] = snapshot.groups;
      const activity = reading?.state === "ok" ? reading.values.activity : undefined;
      expect(activity?.minConsumerIdleMs ?? Infinity).toBeLessThan(SEEN_WITHIN_MS);
    }
  });
});
