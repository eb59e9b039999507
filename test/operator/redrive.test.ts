import { describe, expect, it } from "vitest";
import { RateLimiter } from "../../src/operations/RateLimiter.js";
import {
  redriveDeadLetters,
  RedriveRefusedError,
  type RedriveOptions,
} from "../../src/operations/redriveDeadLetters.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import {
  addAuditDeadLetter,
  addDeadLetterReaders,
  addDeadLetters,
  addWorkersDeadLetters,
  fieldValue,
  originalFields,
  rawEntries,
  readerGhosts,
  type MetadataLayout,
} from "./deadLetterFixtures.js";

const fixture = useRedisServer();

function options(overrides: Partial<RedriveOptions> = {}): RedriveOptions {
  return {
    limit: Number.POSITIVE_INFINITY,
    reason: undefined,
    dryRun: false,
    limiter: new RateLimiter({ ratePerSecond: 0 }),
    ...overrides,
  };
}

const METADATA_OF_A_COPY = [
  "x-original-id",
  "x-delivery-count",
  "x-redrive-count",
  "x-redriven-at",
];

describe("dlq redrive", () => {
  it.each<[MetadataLayout]>([["metadata-first"], ["metadata-last"]])(
    "copies the original fields byte for byte and in order, then the copy's metadata (%s)",
    async (layout) => {
      const stream = uniquePrefix("redrive-bytes");
      const group = groupConfig(stream);
      await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
      const letters = await addDeadLetters(fixture.redis, {
        stream,
        group: "workers",
        deadLetterStream: group.deadLetterStream,
        count: 5,
        layout,
      });
      const [time] = (await fixture.redis.call("TIME")) as [string, string];
      const summary = await redriveDeadLetters(registerScripts(fixture.redis), group, options());
      expect(summary).toEqual({ redriven: 5, remaining: 0, dryRun: false });
      expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(0);

      const copies = await rawEntries(fixture.redis, stream);
      expect(copies).toHaveLength(5);
      copies.forEach(([, fields], index) => {
        const letter = letters[index];
        if (letter === undefined) throw new Error("missing letter");
        // The original fields first, exactly; then exactly the copy's metadata, in this order.
        expect(fields.slice(0, letter.fields.length)).toEqual(letter.fields);
        const metadata = fields.slice(letter.fields.length);
        expect(metadata.filter((_, i) => i % 2 === 0).map(String)).toEqual(METADATA_OF_A_COPY);
        expect(fieldValue(metadata, "x-original-id")).toBe(letter.originalId);
        expect(fieldValue(metadata, "x-delivery-count")).toBe("0");
        expect(fieldValue(metadata, "x-redrive-count")).toBe("1");
        expect(Number(fieldValue(metadata, "x-redriven-at"))).toBeGreaterThanOrEqual(
          Number(time) * 1000,
        );
      });
    },
  );

  it("counts redrives across rounds", async () => {
    const stream = uniquePrefix("redrive-count");
    const group = groupConfig(stream, { requeueStream: `${stream}:retry` });
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: group.deadLetterStream,
      count: 1,
      redriveCount: 2,
      layout: "metadata-last",
    });
    await redriveDeadLetters(registerScripts(fixture.redis), group, options());
    const [[, fields] = ["", []]] = await rawEntries(fixture.redis, `${stream}:retry`);
    expect(fieldValue(fields, "x-redrive-count")).toBe("3");
    expect(fields.filter((field) => field.toString() === "x-redrive-count")).toHaveLength(1);
  });

  it("moves only the group's dead letters of the chosen reason, up to --limit", async () => {
    const stream = uniquePrefix("redrive-select");
    const group = groupConfig(stream);
    const dead = group.deadLetterStream;
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: dead,
      count: 4,
      reason: "action",
    });
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: dead,
      count: 3,
      firstOriginal: 10,
    });
    // Another group of the same stream shares the default dead-letter stream.
    await addDeadLetters(fixture.redis, {
      stream,
      group: "audit",
      deadLetterStream: dead,
      count: 2,
      reason: "action",
      firstOriginal: 20,
    });
    const redis = registerScripts(fixture.redis);

    const limited = await redriveDeadLetters(redis, group, options({ reason: "action", limit: 3 }));
    expect(limited).toEqual({ redriven: 3, remaining: 1, dryRun: false });
    const rest = await redriveDeadLetters(redis, group, options({ reason: "action" }));
    expect(rest).toEqual({ redriven: 1, remaining: 0, dryRun: false });
    const copies = await rawEntries(fixture.redis, stream);
    expect(copies.map(([, f]) => fieldValue(f, "x-original-id"))).toEqual([
      "1000-1",
      "1000-2",
      "1000-3",
      "1000-4",
    ]);
    const left = await rawEntries(fixture.redis, dead);
    expect(
      left.map(
        ([, f]) => `${fieldValue(f, "x-original-group")}:${fieldValue(f, "x-dead-letter-reason")}`,
      ),
    ).toEqual([
      "workers:max-deliveries",
      "workers:max-deliveries",
      "workers:max-deliveries",
      "audit:action",
      "audit:action",
    ]);
  });

  it("moves only the dead letters that existed when it started", async () => {
    const stream = uniquePrefix("redrive-snapshot");
    const group = groupConfig(stream);
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: group.deadLetterStream,
      count: 6,
    });
    let added = false;
    // A consumer that dead-letters the copies again while the redrive runs: they are not chased.
    const summary = await redriveDeadLetters(registerScripts(fixture.redis), group, {
      ...options({ pageSize: 2 }),
      progress: {
        start: () => undefined,
        stop: () => undefined,
        update: () => {
          if (added) return;
          added = true;
          void addDeadLetters(fixture.redis, {
            stream,
            group: "workers",
            deadLetterStream: group.deadLetterStream,
            count: 2,
            firstOriginal: 50,
          });
        },
      },
    });
    expect(summary).toEqual({ redriven: 6, remaining: 2, dryRun: false });
    const left = await rawEntries(fixture.redis, group.deadLetterStream);
    expect(left.map(([, f]) => fieldValue(f, "x-original-id"))).toEqual(["1000-50", "1000-51"]);
  });

  it("changes nothing in a dry run", async () => {
    const stream = uniquePrefix("redrive-dry");
    const group = groupConfig(stream);
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    await fixture.redis.xadd(stream, "*", ...originalFields(0));
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: group.deadLetterStream,
      count: 7,
    });
    const before = [
      await fixture.redis.dump(stream),
      await fixture.redis.dump(group.deadLetterStream),
    ];
    const summary = await redriveDeadLetters(
      registerScripts(fixture.redis),
      group,
      options({ dryRun: true, limit: 5 }),
    );
    expect(summary).toEqual({ redriven: 5, remaining: 2, dryRun: true });
    expect([
      await fixture.redis.dump(stream),
      await fixture.redis.dump(group.deadLetterStream),
    ]).toEqual(before);
  });

  it("refuses a target that other groups read, naming them, and changes nothing", async () => {
    const stream = uniquePrefix("redrive-refused");
    const group = groupConfig(stream);
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    await fixture.redis.xgroup("CREATE", stream, "analytics", "$");
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: group.deadLetterStream,
      count: 2,
    });
    const run = redriveDeadLetters(registerScripts(fixture.redis), group, options());
    await expect(run).rejects.toBeInstanceOf(RedriveRefusedError);
    await expect(run).rejects.toThrow(/analytics/u);
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(2);
    expect(await fixture.redis.xlen(stream)).toBe(0);
  });

  it("refuses a target that has run out of ids before its first write, then redrives once", async () => {
    const stream = uniquePrefix("redrive-exhausted");
    const group = groupConfig(stream);
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: group.deadLetterStream,
      count: 10,
    });
    // The repro: 5 ids left in the target, 10 dead letters to move.
    await fixture.redis.xadd(stream, "18446744073709551615-18446744073709551610", "m", "1");
    const redis = registerScripts(fixture.redis);

    const run = redriveDeadLetters(redis, group, options());
    await expect(run).rejects.toThrow(/IDSEXHAUSTED .*used up its ids/u);
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(10);
    expect(await fixture.redis.xlen(stream)).toBe(1);

    // Pointed elsewhere, every dead letter is moved exactly once.
    const elsewhere = groupConfig(stream, { requeueStream: `{${stream}}:elsewhere` });
    expect(await redriveDeadLetters(redis, elsewhere, options())).toEqual({
      redriven: 10,
      remaining: 0,
      dryRun: false,
    });
    const copies = await rawEntries(fixture.redis, `{${stream}}:elsewhere`);
    expect(copies.map(([, f]) => fieldValue(f, "x-original-id"))).toEqual(
      Array.from({ length: 10 }, (_, i) => `1000-${i + 1}`),
    );
    expect(await fixture.redis.xlen(stream)).toBe(1);
  });

  it("never moves a dead letter a group of the dead-letter stream still needs, and names the groups", async () => {
    const stream = uniquePrefix("redrive-readers");
    const group = groupConfig(stream);
    const dead = group.deadLetterStream;
    const letters = await addWorkersDeadLetters(fixture.redis, stream, dead, 10);
    await addDeadLetterReaders(fixture.redis, dead, letters);
    const redis = registerScripts(fixture.redis);
    const heldBackBy = [
      { group: "archivers", entries: 1 },
      { group: "auditors", entries: 8 },
    ];

    expect(await redriveDeadLetters(redis, group, options({ dryRun: true }))).toEqual({
      redriven: 2,
      remaining: 8,
      dryRun: true,
      heldBackBy,
    });
    expect(await fixture.redis.xlen(dead)).toBe(10);

    const summary = await redriveDeadLetters(redis, group, options({ pageSize: 3 }));
    expect(summary).toEqual({ redriven: 2, remaining: 8, dryRun: false, heldBackBy });
    const copies = await rawEntries(fixture.redis, stream);
    expect(copies.map(([, f]) => fieldValue(f, "x-original-id"))).toEqual(["1000-1", "1000-2"]);
    const left = await rawEntries(fixture.redis, dead);
    expect(left.map(([id]) => id)).toEqual(letters.slice(2).map((letter) => letter.id));
    expect(await readerGhosts(fixture.redis, dead, "auditors")).toEqual([]);
    expect(await readerGhosts(fixture.redis, dead, "archivers")).toEqual([]);
  });

  it("moves single dead letters by --id and reports the ids that are not the group's dead letters", async () => {
    const stream = uniquePrefix("redrive-ids");
    const group = groupConfig(stream);
    const dead = group.deadLetterStream;
    const letters = await addWorkersDeadLetters(fixture.redis, stream, dead, 4);
    const others = await addAuditDeadLetter(fixture.redis, stream, dead);
    const redis = registerScripts(fixture.redis);
    // letters[3] twice: moved once.
    const ids = [
      letters[3]?.id ?? "",
      letters[1]?.id ?? "",
      others?.id ?? "",
      "1-1",
      letters[3]?.id ?? "",
    ];

    expect(await redriveDeadLetters(redis, group, options({ ids, dryRun: true }))).toEqual({
      redriven: 2,
      remaining: 2,
      dryRun: true,
      unknownIds: [others?.id, "1-1"],
    });
    expect(await fixture.redis.xlen(stream)).toBe(0);

    expect(await redriveDeadLetters(redis, group, options({ ids }))).toEqual({
      redriven: 2,
      remaining: 2,
      dryRun: false,
      unknownIds: [others?.id, "1-1"],
    });
    const copies = await rawEntries(fixture.redis, stream);
    expect(copies.map(([, f]) => fieldValue(f, "x-original-id")).sort()).toEqual([
      "1000-2",
      "1000-4",
    ]);
    const left = await rawEntries(fixture.redis, dead);
    expect(left.map(([id]) => id)).toEqual([letters[0]?.id, letters[2]?.id, others?.id]);
  });

  it("keeps to --rate: the limiter, on a virtual clock, paces the pages", async () => {
    const stream = uniquePrefix("redrive-rate");
    const group = groupConfig(stream);
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: group.deadLetterStream,
      count: 250,
    });
    let clock = 0;
    const pages: number[] = [];
    const limiter = new RateLimiter({
      ratePerSecond: 100,
      now: () => clock,
      sleep: (ms) => {
        clock += ms;
        return Promise.resolve();
      },
    });
    const summary = await redriveDeadLetters(registerScripts(fixture.redis), group, {
      ...options({ limiter }),
      progress: {
        start: () => undefined,
        stop: () => undefined,
        update: (done) => pages.push(done),
      },
    });
    expect(summary.redriven).toBe(250);
    // 250 entries at 100/s with a 10-entry burst: (250 - 10) / 100 s of waiting.
    expect(clock).toBeGreaterThanOrEqual(2400);
    expect(clock).toBeLessThan(2500);
    // No page larger than the bucket (a tenth of a second of entries).
    const sizes = pages.map((done, i) => done - (pages[i - 1] ?? 0));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(10);
  });
});
