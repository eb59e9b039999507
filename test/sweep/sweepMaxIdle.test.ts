import { EventEmitter } from "node:events";
import { pino } from "pino";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { recordSweep, recordSweepMetrics } from "../../src/daemon/recordSweep.js";
import type { SupervisorEvents } from "../../src/daemon/SupervisorEvents.js";
import { createJanitorMetrics } from "../../src/metrics/janitorMetrics.js";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import {
  addStuckEntries,
  numberedBodies,
  pendingEntries,
  streamEntries,
} from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { gaugeValue } from "../metrics/refresherHarness.js";
import { captureLogger, groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";

const fixture = useRedisServer();
const HOUR = 3_600_000;

/** Backdates `ids` (same owner, same delivery count): idle fabricated, nothing delivered. */
async function backdate(stream: string, owner: string, ids: string[], idleMs: number) {
  const [first] = await pendingEntries(fixture.redis, stream, "workers");
  await fixture.redis.call(
    "XCLAIM",
    stream,
    "workers",
    owner,
    0,
    ...ids,
    "IDLE",
    idleMs,
    "RETRYCOUNT",
    first?.deliveries ?? 1,
    "JUSTID",
  );
}

describe("deadLetterAfterIdleMs: no entry stuck forever", () => {
  for (const action of ["requeue", "reassign", "dead-letter"] as const) {
    it(`${action}: dead-letters an entry idle past deadLetterAfterIdleMs with reason max-idle`, async () => {
      const stream = uniquePrefix(`max-idle-${action}`);
      // Two entries idle 3 h (past the limit of 2 h), one idle 1 h (claimed as the action says).
      const [old1 = "", old2 = ""] = await addStuckEntries(
        fixture.redis,
        stream,
        "workers",
        numberedBodies(2, ["body", "x"]),
        { consumer: "c1", idleMs: 3 * HOUR, deliveries: 2 },
      );
      const [young = ""] = await addStuckEntries(
        fixture.redis,
        stream,
        "workers",
        numberedBodies(1),
        { consumer: "c1", idleMs: HOUR, deliveries: 1 },
      );
      const group = groupConfig(stream, {
        action,
        minIdleMs: 1000,
        deadLetterAfterIdleMs: 2 * HOUR,
      });

      const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);

      expect(result.error).toBeUndefined();
      expect(result.deadLetteredMaxIdle).toBe(2);
      expect(result.deadLetteredMaxDeliveries).toBe(0);
      expect(result.deadLetteredAction).toBe(action === "dead-letter" ? 1 : 0);
      expect(result.deadLettered).toBe(action === "dead-letter" ? 3 : 2);
      const deadLetters = await streamEntries(fixture.redis, group.deadLetterStream);
      const byOriginal = new Map(deadLetters.map((e) => [e.fields.get("x-original-id"), e]));
      for (const id of [old1, old2]) {
        const letter = byOriginal.get(id);
        expect(letter?.raw.slice(0, 6)).toEqual(
          ["n", id === old1 ? "0" : "1", "body", "x"].concat(["x-original-id", id]),
        );
        expect(Object.fromEntries(letter?.fields ?? [])).toMatchObject({
          "x-original-id": id,
          "x-original-stream": stream,
          "x-original-group": "workers",
          "x-delivery-count": "2",
          "x-dead-letter-reason": "max-idle",
          "x-last-consumer": "c1",
        });
        expect(Number(letter?.fields.get("x-dead-lettered-at"))).toBeGreaterThan(0);
      }
      const pending = await pendingEntries(fixture.redis, stream, "workers");
      expect(pending.map((e) => e.id)).not.toContain(old1);
      expect(pending.map((e) => e.id)).not.toContain(old2);
      if (action === "dead-letter") {
        expect(byOriginal.get(young)?.fields.get("x-dead-letter-reason")).toBe("action");
      } else if (action === "requeue") {
        expect(result.requeued).toBe(1);
      } else {
        // No other live consumer: the young entry stays with its owner.
        expect(result.leftPending).toBe(1);
        expect(pending.map((e) => e.id)).toEqual([young]);
      }
    });
  }

  it("max-deliveries wins over max-idle when both apply", async () => {
    const stream = uniquePrefix("max-idle-and-deliveries");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(1), {
      idleMs: 3 * HOUR,
      deliveries: 5,
    });
    const group = groupConfig(stream, { deadLetterAfterIdleMs: HOUR, maxDeliveries: 5 });
    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
    expect(result).toMatchObject({ deadLetteredMaxDeliveries: 1, deadLetteredMaxIdle: 0 });
  });

  it("monitor never claims, however long entries idle", async () => {
    const stream = uniquePrefix("max-idle-monitor");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3), {
      idleMs: 3 * HOUR,
    });
    const before = await pendingEntries(fixture.redis, stream, "workers");
    const group = groupConfig(stream, { action: "monitor", deadLetterAfterIdleMs: HOUR });
    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
    expect(result).toMatchObject({ claimed: 0, deadLettered: 0, deadLetteredMaxIdle: 0 });
    const after = await pendingEntries(fixture.redis, stream, "workers");
    expect(after.map((e) => [e.id, e.consumer, e.deliveries])).toEqual(
      before.map((e) => [e.id, e.consumer, e.deliveries]),
    );
    expect(await fixture.redis.exists(group.deadLetterStream)).toBe(0);
  });

  it("0 (the default) changes nothing: entries idle for days are requeued as before", async () => {
    for (const deadLetterAfterIdleMs of [0, undefined]) {
      const stream = uniquePrefix(`max-idle-off-${String(deadLetterAfterIdleMs)}`);
      await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3), {
        idleMs: 72 * HOUR,
      });
      const group = groupConfig(stream, {
        ...(deadLetterAfterIdleMs === undefined ? {} : { deadLetterAfterIdleMs }),
      });
      const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
      expect(result).toMatchObject({ requeued: 3, deadLettered: 0, deadLetteredMaxIdle: 0 });
    }
  });

  it("reassign with one consumer: entries stay pending, logged once per sweep with the count, then dead-lettered once idle past the limit", async () => {
    const stream = uniquePrefix("max-idle-lonely");
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(4), {
      consumer: "only",
      idleMs: HOUR,
    });
    const group = groupConfig(stream, {
      action: "reassign",
      minIdleMs: 1000,
      deadLetterAfterIdleMs: 2 * HOUR,
    });
    const leftLogs = (lines: Record<string, unknown>[]) =>
      lines.filter((l) => String(l.msg).startsWith("reassign found no live consumer"));

    for (let sweep = 0; sweep < 2; sweep += 1) {
      const { logger, lines } = captureLogger();
      // Small pages: the count is per sweep, not per page or entry.
      const result = await sweepOnce(
        group,
        sweepContext(fixture.redis, { logger, batchSize: 1 }),
        neverAborted,
      );
      expect(result).toMatchObject({ leftPending: 4, deadLettered: 0, reassigned: 0 });
      expect(result.pages).toBeGreaterThan(1);
      expect(leftLogs(lines)).toHaveLength(1);
      expect(leftLogs(lines)[0]).toMatchObject({
        count: 4,
        stream,
        group: "workers",
        deadLetterAfterIdleMs: 2 * HOUR,
      });
      const pending = await pendingEntries(fixture.redis, stream, "workers");
      expect(pending.map((e) => [e.id, e.consumer, e.deliveries])).toEqual(
        ids.map((id) => [id, "only", 1]),
      );
    }

    await backdate(stream, "only", ids.slice(0, 3), 2 * HOUR + 1000);
    const { logger, lines } = captureLogger();
    const result = await sweepOnce(group, sweepContext(fixture.redis, { logger }), neverAborted);
    expect(result).toMatchObject({ leftPending: 1, deadLetteredMaxIdle: 3, deadLettered: 3 });
    expect(leftLogs(lines)).toHaveLength(1);
    expect(leftLogs(lines)[0]).toMatchObject({ count: 1 });
    const deadLetters = await streamEntries(fixture.redis, group.deadLetterStream);
    expect(deadLetters.map((e) => e.fields.get("x-original-id"))).toEqual(ids.slice(0, 3));
    expect(deadLetters.map((e) => e.fields.get("x-dead-letter-reason"))).toEqual(
      Array<string>(3).fill("max-idle"),
    );
    expect((await pendingEntries(fixture.redis, stream, "workers")).map((e) => e.id)).toEqual([
      ids[3],
    ]);
  });

  it('counts them in dead_lettered_entries_total{reason="max-idle"}, a series from 0 for the groups that set it', async () => {
    const stream = uniquePrefix("max-idle-metric");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2), {
      idleMs: 3 * HOUR,
    });
    const group = groupConfig(stream, { deadLetterAfterIdleMs: HOUR });
    const other = groupConfig(`${stream}-other`);
    const metrics = createJanitorMetrics(new Registry(), "test");
    const supervisor = Object.assign(new EventEmitter<SupervisorEvents>(), {
      currentGroups: () => [group, other],
    });
    recordSweepMetrics(supervisor, metrics, pino({ level: "silent" }));
    const maxIdle = (stream: string) =>
      gaugeValue(metrics.deadLetteredEntries, { stream, group: "workers", reason: "max-idle" });
    expect(await maxIdle(stream)).toBe(0);
    expect(await maxIdle(other.stream)).toBeUndefined();

    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
    recordSweep(metrics, result, 1_000_000);
    expect(await maxIdle(stream)).toBe(2);
  });
});
