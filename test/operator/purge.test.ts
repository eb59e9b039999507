import { describe, expect, it } from "vitest";
import { purgeDeadLetters } from "../../src/operations/purgeDeadLetters.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import {
  addAuditDeadLetter,
  addDeadLetterReaders,
  addDeadLetters,
  addWorkersDeadLetters,
  fieldValue,
  rawEntries,
  readerGhosts,
} from "./deadLetterFixtures.js";

const fixture = useRedisServer();

async function redisNowMs(): Promise<number> {
  const [seconds, micros] = (await fixture.redis.call("TIME")) as [string, string];
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

describe("dlq purge", () => {
  it("deletes only the group's dead letters older than --older-than-ms", async () => {
    const stream = uniquePrefix("purge-age");
    const group = groupConfig(stream);
    const dead = group.deadLetterStream;
    const now = await redisNowMs();
    // Two hours old, one hour old (ids carry the time), and fresh.
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: dead,
      count: 3,
      atMs: now - 7_200_000,
    });
    await addDeadLetters(fixture.redis, {
      stream,
      group: "audit",
      deadLetterStream: dead,
      count: 2,
      atMs: now - 7_100_000,
      firstOriginal: 10,
    });
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: dead,
      count: 2,
      atMs: now - 3_600_000,
      firstOriginal: 20,
    });
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: dead,
      count: 1,
      firstOriginal: 30,
    });
    const redis = registerScripts(fixture.redis);

    const dry = await purgeDeadLetters(redis, group, {
      olderThanMs: 5_400_000,
      reason: undefined,
      dryRun: true,
    });
    expect(dry).toEqual({ purged: 3, remaining: 3, dryRun: true });
    expect(await fixture.redis.xlen(dead)).toBe(8);

    const summary = await purgeDeadLetters(redis, group, {
      olderThanMs: 5_400_000,
      reason: undefined,
      dryRun: false,
    });
    expect(summary).toEqual({ purged: 3, remaining: 3, dryRun: false });
    const left = await rawEntries(fixture.redis, dead);
    expect(left.map(([, f]) => fieldValue(f, "x-original-id"))).toEqual([
      "1000-10",
      "1000-11",
      "1000-20",
      "1000-21",
      "1000-30",
    ]);
  });

  it("deletes by reason, and everything of the group without filters", async () => {
    const stream = uniquePrefix("purge-reason");
    const group = groupConfig(stream);
    const dead = group.deadLetterStream;
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: dead,
      count: 3,
      reason: "action",
    });
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: dead,
      count: 2,
      firstOriginal: 10,
    });
    const redis = registerScripts(fixture.redis);
    expect(
      await purgeDeadLetters(redis, group, {
        olderThanMs: undefined,
        reason: "action",
        dryRun: false,
        pageSize: 2,
      }),
    ).toEqual({
      purged: 3,
      remaining: 0,
      dryRun: false,
    });
    expect(
      await purgeDeadLetters(redis, group, {
        olderThanMs: undefined,
        reason: undefined,
        dryRun: false,
      }),
    ).toEqual({
      purged: 2,
      remaining: 0,
      dryRun: false,
    });
    expect(await fixture.redis.xlen(dead)).toBe(0);
  });

  it("never removes a dead letter a group of the dead-letter stream still needs, and names the groups", async () => {
    const stream = uniquePrefix("purge-readers");
    const group = groupConfig(stream);
    const dead = group.deadLetterStream;
    const letters = await addWorkersDeadLetters(fixture.redis, stream, dead, 10);
    await addDeadLetterReaders(fixture.redis, dead, letters);
    const redis = registerScripts(fixture.redis);
    const heldBackBy = [
      { group: "archivers", entries: 1 },
      { group: "auditors", entries: 8 },
    ];

    const dry = await purgeDeadLetters(redis, group, {
      olderThanMs: undefined,
      reason: undefined,
      dryRun: true,
      pageSize: 3,
    });
    expect(dry).toEqual({ purged: 2, remaining: 8, dryRun: true, heldBackBy });
    expect(await fixture.redis.xlen(dead)).toBe(10);

    const summary = await purgeDeadLetters(redis, group, {
      olderThanMs: undefined,
      reason: undefined,
      dryRun: false,
      pageSize: 3,
    });
    expect(summary).toEqual({ purged: 2, remaining: 8, dryRun: false, heldBackBy });
    const left = await rawEntries(fixture.redis, dead);
    expect(left.map(([id]) => id)).toEqual(letters.slice(2).map((letter) => letter.id));
    expect(await readerGhosts(fixture.redis, dead, "auditors")).toEqual([]);
    expect(await readerGhosts(fixture.redis, dead, "archivers")).toEqual([]);
  });

  it("deletes single dead letters by --id and reports the ids that are not the group's dead letters", async () => {
    const stream = uniquePrefix("purge-ids");
    const group = groupConfig(stream);
    const dead = group.deadLetterStream;
    const letters = await addWorkersDeadLetters(fixture.redis, stream, dead, 4);
    const others = await addAuditDeadLetter(fixture.redis, stream, dead);
    const redis = registerScripts(fixture.redis);
    const ids = [letters[1]?.id ?? "", letters[3]?.id ?? "", others?.id ?? "", "1-1"];

    const dry = await purgeDeadLetters(redis, group, {
      ids,
      olderThanMs: undefined,
      reason: undefined,
      dryRun: true,
    });
    expect(dry).toEqual({
      purged: 2,
      remaining: 2,
      dryRun: true,
      unknownIds: [others?.id, "1-1"],
    });
    expect(await fixture.redis.xlen(dead)).toBe(5);

    const summary = await purgeDeadLetters(redis, group, {
      ids: [...ids, letters[1]?.id ?? ""],
      olderThanMs: undefined,
      reason: undefined,
      dryRun: false,
    });
    expect(summary).toEqual({
      purged: 2,
      remaining: 2,
      dryRun: false,
      unknownIds: [others?.id, "1-1"],
    });
    const left = await rawEntries(fixture.redis, dead);
    expect(left.map(([id]) => id)).toEqual([letters[0]?.id, letters[2]?.id, others?.id]);
  });
});
