import { describe, expect, it } from "vitest";
import vitestConfig from "../vitest.config.js";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import { addStuckEntries, pendingEntries, streamEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";
import { seededRandom } from "../support/seededRandom.js";

const fixture = useRedisServer();

interface Planned {
  /** The source stream or the group's retry lane. */
  stream: string;
  id: string;
  /** The entry's id in the source: its own, or a lane copy's x-original-id. */
  originalId: string;
  consumer: string;
  idleMs: number;
  /** The PEL's count where the entry is pending. */
  deliveries: number;
  /** A lane copy's x-delivery-count: deliveries before this incarnation (0 in the source). */
  earlier: number;
  ghost: boolean;
  due: boolean;
}

const GROUP = "workers";
/**
 * Real time passes between fabricating and sweeping, and idle times are Redis server time, which
 * no test can stop. So no entry is planned within MARGIN_MS of its turn, and MARGIN_MS is longer
 * than a test may run (testTimeout): however busy the machine, no entry changes sides while the
 * test runs, and "at once again" is exact. The plan is drawn in milliseconds and stretched by
 * SCALE, so the seeds give the same entries as before.
 */
const SCALE = 600;
const MIN_IDLE_MS = 1000 * SCALE;
const MARGIN_MS = 400 * SCALE;
const MAX_DELIVERIES = 4;

function plan(
  random: () => number,
  stream: string,
  id: string,
  originalId: string,
  earlier: number,
  maxPelDeliveries: number,
): Planned {
  let idleMs = Math.floor(random() * 5000) * SCALE;
  if (Math.abs(idleMs - MIN_IDLE_MS) < MARGIN_MS) idleMs = MIN_IDLE_MS + MARGIN_MS;
  const consumer = `c${Math.floor(random() * 3)}`;
  const deliveries = 1 + Math.floor(random() * maxPelDeliveries);
  return {
    stream,
    id,
    originalId,
    consumer,
    idleMs,
    deliveries,
    earlier,
    ghost: random() < 0.08,
    // Idle past minIdleMs, or delivered more than maxDeliveries times (its PEL count) whatever
    // its idle time.
    due: idleMs >= MIN_IDLE_MS || deliveries > MAX_DELIVERIES,
  };
}

/** Gives each planned entry its owner, idle time and count, and deletes the ghosts' bodies. */
async function applyPel(planned: readonly Planned[]): Promise<void> {
  const pipeline = fixture.redis.pipeline();
  for (const e of planned) {
    pipeline.call(
      "XCLAIM",
      e.stream,
      GROUP,
      e.consumer,
      0,
      e.id,
      "IDLE",
      e.idleMs,
      "RETRYCOUNT",
      e.deliveries,
      "JUSTID",
    );
  }
  for (const e of planned) if (e.ghost) pipeline.xdel(e.stream, e.id);
  await pipeline.exec();
}

/**
 * A source stream read by two groups and the `workers` group's retry lane, both with random
 * PELs: owners, delivery counts, idle times, some deleted bodies (ghosts). The lane's entries
 * are copies as the janitor writes them (x-original-id, x-delivery-count), made pending by a
 * real read and then backdated.
 */
async function randomLanePel(
  stream: string,
  lane: string,
  seed: number,
  size: number,
): Promise<Planned[]> {
  const random = seededRandom(seed);
  const sourceIds = await addStuckEntries(
    fixture.redis,
    stream,
    GROUP,
    Array.from({ length: size }, (_, i) => ["n", `source-${i}`]),
  );
  await fixture.redis.xgroup("CREATE", stream, "audit", "0");
  const source = sourceIds.map((id) => plan(random, stream, id, id, 0, 5));

  await fixture.redis.xgroup("CREATE", lane, GROUP, "0", "MKSTREAM");
  const adds = fixture.redis.pipeline();
  const earlier: number[] = [];
  for (let i = 0; i < size; i += 1) {
    earlier.push(1 + Math.floor(random() * 3));
    // Ids of source entries acknowledged long ago: never equal to a source entry's above.
    const fields = ["n", `lane-${i}`, "x-original-id", `${i + 1}-0`];
    adds.xadd(lane, "*", ...fields, "x-delivery-count", String(earlier[i]));
  }
  const laneIds = ((await adds.exec()) ?? []).map(([error, id]) => {
    if (error) throw error;
    return String(id);
  });
  await fixture.redis.call("XREADGROUP", "GROUP", GROUP, "reader", "STREAMS", lane, ">");
  const laneEntries = laneIds.map((id, i) =>
    plan(random, lane, id, `${i + 1}-0`, earlier[i] ?? 0, 2),
  );
  await applyPel([...source, ...laneEntries]);
  return [...source, ...laneEntries];
}

describe("retry lanes over random PELs", () => {
  it("plans no entry closer to its turn than a test may run", () => {
    expect(MARGIN_MS).toBeGreaterThan(Number(vitestConfig.test?.testTimeout));
  });
  for (const seed of [1, 7, 23, 99, 2026]) {
    it(`seed ${seed}: each due entry handled once, into the lane or the group's dead letters; nothing waiting touched`, async () => {
      const stream = uniquePrefix(`lane-prop-${seed}`);
      const group = groupConfig(stream, {
        action: "requeue",
        retryLane: true,
        minIdleMs: MIN_IDLE_MS,
        maxDeliveries: MAX_DELIVERIES,
      });
      const lane = group.retryLaneStream ?? "";
      expect(lane).toBe(`{${stream}}:${GROUP}:retry`);
      const planned = await randomLanePel(stream, lane, seed, 150);
      const laneBefore = await fixture.redis.xlen(lane);
      const sourceBefore = await fixture.redis.xlen(stream);
      // Small pages, so that runs, windows and the cursor all cross page boundaries.
      const context = sweepContext(fixture.redis, { batchSize: 7 });

      const result = await sweepOnce(group, context, neverAborted);

      expect(result.error).toBeUndefined();
      expect(result.complete).toBe(true);
      const handled = planned.filter((e) => e.due && !e.ghost);
      const total = (e: Planned): number => e.earlier + e.deliveries;
      const requeuedOf = (entries: Planned[]): Planned[] =>
        entries.filter((e) => e.due && !e.ghost && total(e) < MAX_DELIVERIES);
      const deadOf = (entries: Planned[]): Planned[] =>
        entries.filter((e) => e.due && !e.ghost && total(e) >= MAX_DELIVERIES);
      const requeued = requeuedOf(planned);
      const dead = deadOf(planned);
      // Every kind of entry is there to be judged, in the source and in the lane alike.
      for (const key of [stream, lane]) {
        const here = planned.filter((e) => e.stream === key);
        expect(here.some((e) => !e.due)).toBe(true);
        expect(here.some((e) => e.due && e.ghost)).toBe(true);
        expect(requeuedOf(here).length).toBeGreaterThan(0);
        expect(deadOf(here).length).toBeGreaterThan(0);
      }
      expect(result.claimed).toBe(handled.length);
      expect(result.ghosts).toBe(planned.filter((e) => e.due && e.ghost).length);
      expect(result.requeued).toBe(requeued.length);
      expect(result.deadLettered).toBe(dead.length);

      // Nothing was copied into the source: the other group sees no duplicate.
      expect(await fixture.redis.xlen(stream)).toBe(sourceBefore);
      const sourceFields = await streamEntries(fixture.redis, stream);
      expect(sourceFields.filter((e) => e.fields.has("x-original-id"))).toEqual([]);
      expect(await pendingEntries(fixture.redis, stream, "audit")).toEqual([]);

      // The copies: appended to the lane, once each (the source's PEL first, then the lane's),
      // with the count carried across both.
      const copies = (await streamEntries(fixture.redis, lane)).slice(laneBefore);
      expect(
        copies.map((c) => [c.fields.get("x-original-id"), c.fields.get("x-delivery-count")]),
      ).toEqual(requeued.map((e) => [e.originalId, String(total(e))]));

      // Dead letters: in the group's own dead-letter stream, naming the entry in the source.
      const letters = await streamEntries(fixture.redis, group.deadLetterStream);
      expect(
        letters.map((l) => [
          l.fields.get("x-original-id"),
          l.fields.get("x-original-stream"),
          l.fields.get("x-original-group"),
          l.fields.get("x-delivery-count"),
          l.fields.get("x-dead-letter-reason"),
          l.fields.get("x-last-consumer"),
        ]),
      ).toEqual(
        dead.map((e) => [
          e.originalId,
          stream,
          GROUP,
          String(total(e)),
          "max-deliveries",
          e.consumer,
        ]),
      );
      const originals = [...copies, ...letters].map((c) => c.fields.get("x-original-id"));
      expect(new Set(originals).size).toBe(handled.length);

      // Nothing not yet due was claimed: both PELs hold exactly the waiting entries, unchanged.
      for (const key of [stream, lane]) {
        const waiting = planned.filter((e) => e.stream === key && !e.due);
        const pending = await pendingEntries(fixture.redis, key, GROUP);
        expect(pending.map((e) => [e.id, e.consumer, e.deliveries])).toEqual(
          waiting.map((e) => [e.id, e.consumer, e.deliveries]),
        );
        pending.forEach((e, i) => expect(e.idleMs).toBeGreaterThanOrEqual(waiting[i]?.idleMs ?? 0));
      }

      // At once again: nothing became due, nothing is handled twice.
      const second = await sweepOnce(group, context, neverAborted);
      expect(second.claimed + second.ghosts).toBe(0);

      // Later: every waiting entry (with a body) is due and none is skipped. (Waiting ghosts
      // cannot be backdated: XCLAIM drops a deleted entry from the PEL; they stay.)
      const later = planned.filter((e) => !e.due && !e.ghost);
      await applyPel(later.map((e) => ({ ...e, idleMs: 30_000 * SCALE })));
      const third = await sweepOnce(group, context, neverAborted);
      expect(third.claimed).toBe(later.length);
      expect(third.ghosts).toBe(0);
      const allCopies = (await streamEntries(fixture.redis, lane)).slice(laneBefore);
      const allLetters = await streamEntries(fixture.redis, group.deadLetterStream);
      const everything = [...allCopies, ...allLetters].map((c) => c.fields.get("x-original-id"));
      expect(new Set(everything).size).toBe(everything.length);
      expect(everything.length).toBe(planned.filter((e) => !e.ghost).length);
      expect(await fixture.redis.xlen(stream)).toBe(sourceBefore);
    });
  }
});
