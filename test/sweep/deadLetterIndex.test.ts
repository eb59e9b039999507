import { describe, expect, it } from "vitest";
import { purgeDeadLetters } from "../../src/operations/purgeDeadLetters.js";
import { RateLimiter } from "../../src/operations/RateLimiter.js";
import { redriveDeadLetters } from "../../src/operations/redriveDeadLetters.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import type { ResolvedGroup } from "../../src/core/resolveGroup.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig, neverAborted, sweepContext } from "../support/sweepHarness.js";
import { createTestRefresher } from "../metrics/refresherHarness.js";
import { addDeadLetters } from "../operator/deadLetterFixtures.js";
import { runIndexDeadLetters } from "../../src/scripts/indexDeadLetters.js";
import { deadLetterIndexKeys } from "../../src/core/deadLetterIndex.js";

const fixture = useRedisServer();

/** stream_janitor_dead_letters_entries of each group, from one scrape (absent: no sample). */
async function deadLettersOf(groups: ResolvedGroup[]): Promise<(number | undefined)[]> {
  const { refresher, registry } = createTestRefresher(fixture.redis, groups);
  await refresher.refresh();
  const text = await registry.metrics();
  return groups.map((group) => {
    const prefix = `stream_janitor_dead_letters_entries{stream="${group.stream}",group="${group.group}"} `;
    const line = text.split("\n").find((l) => l.startsWith(prefix));
    return line === undefined ? undefined : Number(line.slice(prefix.length));
  });
}

async function sweep(...groups: ResolvedGroup[]): Promise<void> {
  for (const group of groups) {
    const result = await sweepOnce(group, sweepContext(fixture.redis), neverAborted);
    expect(result.error).toBeUndefined();
  }
}

/** Two dead-letter groups of one stream, sharing {stream}:dead: `a` dead letters, `b` too. */
async function twoGroups(name: string, a: number, b: number, overrides = {}) {
  const stream = uniquePrefix(name);
  await addStuckEntries(fixture.redis, stream, "billing", numberedBodies(a));
  await addStuckEntries(fixture.redis, stream, "audit", numberedBodies(b));
  const billing = groupConfig(stream, { group: "billing", action: "dead-letter", ...overrides });
  const audit = groupConfig(stream, { group: "audit", action: "dead-letter", ...overrides });
  return { stream, billing, audit };
}

const redriveAll = {
  limit: Number.POSITIVE_INFINITY,
  reason: undefined,
  dryRun: false,
  limiter: new RateLimiter({ ratePerSecond: 0 }),
};

describe("the per-group dead-letter count stays exact", () => {
  it("through dlq purge and dlq redrive of one group", async () => {
    const { billing, audit } = await twoGroups("dl-index-ops", 2, 4);
    await sweep(billing, audit);
    expect(await deadLettersOf([billing, audit])).toEqual([2, 4]);

    const all = await purgeDeadLetters(registerScripts(fixture.redis), audit, {
      olderThanMs: undefined,
      reason: undefined,
      dryRun: false,
    });
    expect(all).toMatchObject({ purged: 4, remaining: 0 });
    expect(await deadLettersOf([billing, audit])).toEqual([2, 0]);

    const moved = await redriveDeadLetters(registerScripts(fixture.redis), billing, {
      ...redriveAll,
      limit: 1,
      to: "lane",
    });
    expect(moved).toMatchObject({ redriven: 1, remaining: 1 });
    expect(await deadLettersOf([billing, audit])).toEqual([1, 0]);
  });

  it("when deadLetterMaxLen drops dead letters, for every group sharing the stream", async () => {
    // MAXLEN ~ trims whole nodes of the stream: a small node size makes the cap bite at once.
    await fixture.redis.config("SET", "stream-node-max-entries", "4");
    try {
      const { billing, audit } = await twoGroups("dl-index-cap", 8, 6, { deadLetterMaxLen: 4 });
      await sweep(billing, audit);
      const left = await fixture.redis.xrange(billing.deadLetterStream, "-", "+");
      const count = (group: string) => left.filter(([, fields]) => fields.includes(group)).length;
      expect(left.length).toBeLessThan(14);
      // Both groups swept again: each one's index drops what the cap dropped.
      await sweep(billing, audit);
      expect(await deadLettersOf([billing, audit])).toEqual([count("billing"), count("audit")]);
    } finally {
      await fixture.redis.config("SET", "stream-node-max-entries", "100");
    }
  });

  it("migrates dead letters written before the index existed, and says so until then", async () => {
    const stream = uniquePrefix("dl-index-migrate");
    const billing = groupConfig(stream, { group: "billing", action: "dead-letter" });
    const audit = groupConfig(stream, { group: "audit", action: "dead-letter" });
    await addStuckEntries(fixture.redis, stream, "billing", numberedBodies(1));
    await fixture.redis.xgroup("CREATE", stream, "audit", "$");
    // Dead letters as an older janitor wrote them: no index anywhere.
    for (const [group, count] of [
      ["audit", 5],
      ["billing", 2],
    ] as const) {
      await addDeadLetters(fixture.redis, {
        stream,
        group,
        deadLetterStream: billing.deadLetterStream,
        count,
      });
    }
    // Not exact before the first sweep: no sample rather than a wrong one.
    expect(await deadLettersOf([billing, audit])).toEqual([undefined, undefined]);
    await sweep(billing, audit);
    expect(await deadLettersOf([billing, audit])).toEqual([3, 5]);
  });

  it("a build stopped between pages resumes at its cursor; a purge meanwhile keeps it exact", async () => {
    const stream = uniquePrefix("dl-index-resume");
    const billing = groupConfig(stream, { group: "billing", action: "dead-letter" });
    await fixture.redis.xgroup("CREATE", stream, "billing", "$", "MKSTREAM");
    const letters = await addDeadLetters(fixture.redis, {
      stream,
      group: "billing",
      deadLetterStream: billing.deadLetterStream,
      count: 7,
    });
    const redis = registerScripts(fixture.redis);
    const page = () =>
      runIndexDeadLetters(redis, { group: billing, pageSize: 3, fence: undefined });
    expect(await page()).toEqual({ complete: false, indexed: 3 });
    // The process dies here; an operator purges one dead letter below and one above the cursor.
    const ids = (await fixture.redis.xrange(billing.deadLetterStream, "-", "+")).map(([id]) => id);
    expect(ids).toHaveLength(letters.length);
    await purgeDeadLetters(redis, billing, {
      olderThanMs: undefined,
      reason: undefined,
      ids: [ids[1] ?? "", ids[5] ?? ""],
      dryRun: false,
    });
    expect(await deadLettersOf([billing])).toEqual([undefined]);
    // From the cursor: ids[3], ids[4] and ids[6] (ids[5] is gone), then the end.
    expect(await page()).toEqual({ complete: false, indexed: 3 });
    expect(await page()).toEqual({ complete: true, indexed: 0 });
    expect(await deadLettersOf([billing])).toEqual([5]);

    // A hand-made XDEL bypasses the index (still counted); deleting its state rebuilds it.
    await fixture.redis.xdel(billing.deadLetterStream, ids[0] ?? "");
    expect(await deadLettersOf([billing])).toEqual([5]);
    await fixture.redis.del(deadLetterIndexKeys(billing).state);
    await sweep(billing);
    expect(await deadLettersOf([billing])).toEqual([4]);
  });
});
