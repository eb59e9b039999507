import type { ChainableCommander } from "ioredis";
import { describe, expect, it } from "vitest";
import vitestConfig from "../vitest.config.js";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import { backoffPolicy, dueAfterMs } from "../../src/core/backoffThreshold.js";
import { addStuckEntries, numberedBodies, pendingEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";
import { seededRandom } from "../support/seededRandom.js";

const fixture = useRedisServer();

interface Planned {
  id: string;
  consumer: string;
  idleMs: number;
  deliveries: number;
  ghost: boolean;
  due: boolean;
}

/**
 * Real time passes between fabricating and sweeping, and idle times are Redis server time, which
 * no test can stop. So no entry is planned within MARGIN_MS of its turn, and MARGIN_MS is longer
 * than a test may run (testTimeout): however busy the machine, no entry changes sides while the
 * test runs, and "at once again" is exact. The plan is drawn in milliseconds and stretched by
 * SCALE, so the seeds give the same entries as before.
 */
const SCALE = 600;
const CONFIG = {
  minIdleMs: 1000 * SCALE,
  backoffMs: [2000 * SCALE, 5000 * SCALE, 20_000 * SCALE],
  backoffJitter: 0.3,
};
const MARGIN_MS = 400 * SCALE;
/** Past every tier's turn, jitter included. */
const LONG_AGO_MS = 30_000 * SCALE;

/** A random PEL: owners, delivery counts, idle times, some deleted bodies (ghosts). */
/** Sets an entry's idle time and delivery count where it is, with its owner unchanged. */
function backdate(
  pipeline: ChainableCommander,
  stream: string,
  entry: { id: string; consumer: string; deliveries: number },
  idleMs: number,
): void {
  pipeline.call(
    "XCLAIM",
    stream,
    "workers",
    entry.consumer,
    0,
    entry.id,
    "IDLE",
    idleMs,
    "RETRYCOUNT",
    entry.deliveries,
    "JUSTID",
  );
}

async function randomPel(stream: string, seed: number, size: number): Promise<Planned[]> {
  const random = seededRandom(seed);
  const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(size));
  const policy = backoffPolicy(CONFIG);
  const planned = ids.map((id): Planned => {
    const deliveries = 1 + Math.floor(random() * 5);
    const threshold = dueAfterMs(policy, id, deliveries);
    let idleMs = Math.floor(random() * 30_000) * SCALE;
    if (Math.abs(idleMs - threshold) < MARGIN_MS) idleMs = threshold + MARGIN_MS;
    return {
      id,
      consumer: `c${Math.floor(random() * 3)}`,
      idleMs,
      deliveries,
      ghost: random() < 0.08,
      due: idleMs >= threshold,
    };
  });
  const pipeline = fixture.redis.pipeline();
  for (const e of planned) backdate(pipeline, stream, e, e.idleMs);
  const ghosts = planned.filter((e) => e.ghost).map((e) => e.id);
  if (ghosts.length > 0) pipeline.xdel(stream, ...ghosts);
  await pipeline.exec();
  return planned;
}

describe("backoff over random PELs", () => {
  it("plans no entry closer to its turn than a test may run", () => {
    expect(MARGIN_MS).toBeGreaterThan(Number(vitestConfig.test?.testTimeout));
  });
  for (const seed of [1, 7, 23, 99, 2026]) {
    for (const action of ["requeue", "dead-letter"] as const) {
      it(`seed ${seed}, ${action}: each due entry handled once, nothing waiting touched`, async () => {
        const stream = uniquePrefix(`backoff-prop-${seed}-${action}`);
        const planned = await randomPel(stream, seed, 300);
        const group = groupConfig(stream, {
          ...CONFIG,
          action,
          maxDeliveries: 100,
          requeueStream: `${stream}:copies`,
        });
        // Small pages, so that runs, windows and the cursor all cross page boundaries.
        const context = sweepContext(fixture.redis, { batchSize: 7 });
        const target = action === "requeue" ? group.requeueStream : group.deadLetterStream;

        const first = await sweepOnce(group, context, neverAborted);

        expect(first.error).toBeUndefined();
        expect(first.complete).toBe(true);
        const dueBodies = planned.filter((e) => e.due && !e.ghost);
        const dueGhosts = planned.filter((e) => e.due && e.ghost);
        expect(first.claimed).toBe(dueBodies.length);
        expect(first.ghosts).toBe(dueGhosts.length);
        const copies = await fixture.redis.xrange(target, "-", "+");
        const copied = copies.map(([, fields]) => fields[fields.indexOf("x-original-id") + 1]);
        expect(copied).toEqual(dueBodies.map((e) => e.id)); // once each, none missing
        const waiting = planned.filter((e) => !e.due);
        const pending = await pendingEntries(fixture.redis, stream, "workers");
        expect(pending.map((e) => [e.id, e.consumer, e.deliveries])).toEqual(
          waiting.map((e) => [e.id, e.consumer, e.deliveries]),
        );
        pending.forEach((e, i) => expect(e.idleMs).toBeGreaterThanOrEqual(waiting[i]?.idleMs ?? 0));

        // At once again: nothing became due, nothing is handled twice.
        const second = await sweepOnce(group, context, neverAborted);
        expect(second.claimed + second.ghosts).toBe(0);

        // Later: every waiting entry is past its last tier's turn; none is skipped. (Waiting
        // ghosts cannot be backdated: XCLAIM drops a deleted entry from the PEL; they stay.)
        const later = waiting.filter((e) => !e.ghost);
        const pipeline = fixture.redis.pipeline();
        for (const e of later) backdate(pipeline, stream, e, LONG_AGO_MS);
        await pipeline.exec();
        const third = await sweepOnce(group, context, neverAborted);
        expect(third.claimed).toBe(later.length);
        expect(third.ghosts).toBe(0);
        const left = await pendingEntries(fixture.redis, stream, "workers");
        expect(left.map((e) => e.id)).toEqual(waiting.filter((e) => e.ghost).map((e) => e.id));
        const all = await fixture.redis.xrange(target, "-", "+");
        const originals = all.map(([, fields]) => fields[fields.indexOf("x-original-id") + 1]);
        expect(new Set(originals).size).toBe(originals.length);
        expect(originals.length).toBe(planned.filter((e) => !e.ghost).length);
      });
    }
  }
});
