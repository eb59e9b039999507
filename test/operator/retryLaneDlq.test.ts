import { describe, expect, it } from "vitest";
import { RateLimiter } from "../../src/operations/RateLimiter.js";
import { listDeadLetters } from "../../src/reads/listDeadLetters.js";
import { purgeDeadLetters } from "../../src/operations/purgeDeadLetters.js";
import {
  redriveDeadLetters,
  RedriveRefusedError,
} from "../../src/operations/redriveDeadLetters.js";
import { formatInspectReport } from "../../src/operations/formatInspectReport.js";
import { readInspectReport, type InspectReport } from "../../src/operations/inspectReport.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import { addStuckEntries, pendingEntries, streamEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";

const fixture = useRedisServer();

const redriveAll = {
  limit: Number.POSITIVE_INFINITY,
  reason: undefined,
  dryRun: false,
  limiter: new RateLimiter({ ratePerSecond: 0 }),
};

/** A poison entry of a lane group dead-lettered at once (maxDeliveries 1), via the lane. */
async function laneDeadLetter(name: string) {
  const stream = uniquePrefix(name);
  const [id] = await addStuckEntries(fixture.redis, stream, "workers", [["n", "poison"]]);
  await fixture.redis.xgroup("CREATE", stream, "audit", "0");
  const group = groupConfig(stream, { retryLane: true, maxDeliveries: 1 });
  const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
  expect(result).toMatchObject({ deadLettered: 1 });
  return { stream, group, id: id ?? "" };
}

describe("dlq on a group with a retry lane", () => {
  it("lists the group's dead letters and redrives them into the lane, never the source", async () => {
    const { stream, group, id } = await laneDeadLetter("lane-dlq-redrive");
    const lane = group.retryLaneStream ?? "";
    const listed = await listDeadLetters(fixture.redis, group, 10);
    expect(listed.map((letter) => letter.metadata["x-original-id"])).toEqual([id]);
    expect(listed[0]?.metadata["x-original-stream"]).toBe(stream);

    const summary = await redriveDeadLetters(registerScripts(fixture.redis), group, redriveAll);

    expect(summary).toEqual({ redriven: 1, remaining: 0, dryRun: false });
    const copies = await streamEntries(fixture.redis, lane);
    expect(copies.map((c) => [c.raw[1], c.fields.get("x-original-id")])).toEqual([["poison", id]]);
    expect(await fixture.redis.xlen(stream)).toBe(1);
    // The group reads it from the lane.
    const read = (await fixture.redis.call(
      "XREADGROUP",
      "GROUP",
      "workers",
      "c1",
      "STREAMS",
      lane,
      ">",
    )) as [string, [string, string[]][]][];
    expect(read[0]?.[1]).toHaveLength(1);
    expect(await pendingEntries(fixture.redis, stream, "workers")).toEqual([]);
  });

  it("refuses to redrive into a lane that another group reads", async () => {
    const { group } = await laneDeadLetter("lane-dlq-intruder");
    await fixture.redis.xgroup("CREATE", group.retryLaneStream ?? "", "intruder", "0");
    await expect(
      redriveDeadLetters(registerScripts(fixture.redis), group, redriveAll),
    ).rejects.toThrow(RedriveRefusedError);
    await expect(
      redriveDeadLetters(registerScripts(fixture.redis), group, redriveAll),
    ).rejects.toThrow(/retry lane .* intruder/u);
  });

  it("purges the group's dead letters", async () => {
    const { group } = await laneDeadLetter("lane-dlq-purge");
    const summary = await purgeDeadLetters(registerScripts(fixture.redis), group, {
      olderThanMs: undefined,
      reason: undefined,
      dryRun: false,
    });
    expect(summary).toMatchObject({ purged: 1, remaining: 0 });
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(0);
  });

  it("inspect reports the lane's length under its group", async () => {
    const { group } = await laneDeadLetter("lane-inspect");
    await fixture.redis.xadd(group.retryLaneStream ?? "", "*", "n", "waiting");
    const config = {
      lease: {
        key: `${group.stream}:lease`,
        ttlMs: 15000,
        renewDeadlineMs: 10000,
        retryPeriodMs: 2000,
      },
      retention: [],
    };
    const report = await readInspectReport(fixture.redis, [group], config);
    expect(report.groups[0]).toMatchObject({
      stream: group.stream,
      group: "workers",
      retryLaneStream: group.retryLaneStream,
      retryLaneLength: 1,
      deadLetterLength: 1,
    });
  });

  it("inspect's text shows the lane and its length", () => {
    const report: InspectReport = {
      nowMs: 0,
      lease: { key: "lease", held: false, fencingToken: null },
      groups: [
        {
          stream: "orders",
          group: "billing",
          deadLetterStream: "{orders}:dead",
          retryLaneStream: "{orders}:billing:retry",
          retryLaneLength: 7,
        },
      ],
    };
    expect(formatInspectReport(report)).toContain(
      "retry lane of orders/billing: {orders}:billing:retry, 7 entries",
    );
  });
});
