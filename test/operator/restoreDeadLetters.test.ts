import { describe, expect, it } from "vitest";
import { RateLimiter } from "../../src/operations/RateLimiter.js";
import { RedriveRefusedError } from "../../src/operations/redriveDeadLetters.js";
import {
  restoreDeadLetters,
  RESTORED_RETENTION_MS,
  type RestoreOptions,
} from "../../src/operations/restoreDeadLetters.js";
import { restoredKey, type SavedDeadLetter } from "../../src/scripts/restoreDeadLetters.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { addDeadLetters, originalFields, rawEntries } from "./deadLetterFixtures.js";

const fixture = useRedisServer();

function options(overrides: Partial<RestoreOptions> = {}): RestoreOptions {
  return { dryRun: false, limiter: new RateLimiter({ ratePerSecond: 0 }), ...overrides };
}

/** Three dead letters of `workers`, read back as a saved file holds them (then purged). */
async function saved(name: string, overrides: Parameters<typeof groupConfig>[1] = {}) {
  const stream = uniquePrefix(name);
  const group = groupConfig(stream, overrides);
  await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
  const dead = group.deadLetterStream;
  await addDeadLetters(fixture.redis, {
    stream,
    group: "workers",
    deadLetterStream: dead,
    count: 3,
  });
  const letters: SavedDeadLetter[] = (await rawEntries(fixture.redis, dead)).map(
    ([id, values]) => ({ id, values }),
  );
  await fixture.redis.del(dead);
  return { stream, group, letters };
}

describe("restoring saved dead letters (dlq redrive --from-file)", () => {
  it("a run interrupted after its first batch, run again, writes each dead letter once", async () => {
    const { group, letters } = await saved("restore-resume", {
      requeueStream: `{${uniquePrefix("x")}}`,
    });
    const redis = registerScripts(fixture.redis);
    const first = await restoreDeadLetters(redis, group, letters.slice(0, 1), options());
    expect(first).toMatchObject({ redriven: 1, alreadyRestored: 0 });
    const again = await restoreDeadLetters(redis, group, letters, options());
    expect(again).toMatchObject({ redriven: 2, total: 3, alreadyRestored: 1 });
    const copies = await rawEntries(fixture.redis, group.requeueStream);
    expect(copies.map(([, fields]) => fields.slice(0, 8))).toEqual([1, 2, 3].map(originalFields));
    const ttl = await fixture.redis.pttl(restoredKey(group));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(RESTORED_RETENTION_MS);
  });

  it("an id restored longer ago than the retention is written again", async () => {
    const { group, letters } = await saved("restore-forgotten");
    const redis = registerScripts(fixture.redis);
    await restoreDeadLetters(redis, group, letters, options());
    // Restored at Unix ms 1: long past the retention.
    await fixture.redis.zadd(restoredKey(group), 1, letters[0]?.id ?? "");
    const again = await restoreDeadLetters(redis, group, letters, options());
    expect(again).toMatchObject({ redriven: 1, alreadyRestored: 2 });
    expect(await fixture.redis.xlen(group.stream)).toBe(4);
    expect(await fixture.redis.zcard(restoredKey(group))).toBe(3);
  });

  it("a target other groups read is refused before anything is written; --to lane is not", async () => {
    const { stream, group, letters } = await saved("restore-conflict");
    await fixture.redis.xgroup("CREATE", stream, "shipping", "$");
    const redis = registerScripts(fixture.redis);
    await expect(restoreDeadLetters(redis, group, letters, options())).rejects.toThrow(
      RedriveRefusedError,
    );
    expect(await fixture.redis.xlen(stream)).toBe(0);
    expect(await fixture.redis.exists(restoredKey(group))).toBe(0);
    const lane = await restoreDeadLetters(redis, group, letters, options({ to: "lane" }));
    expect(lane).toMatchObject({ redriven: 3, target: `{${stream}}:workers:retry` });
    expect(await fixture.redis.xlen(`{${stream}}:workers:retry`)).toBe(3);
  });
});
