import { describe, expect, it } from "vitest";
import { RateLimiter } from "../../src/operations/RateLimiter.js";
import { redriveDeadLetters } from "../../src/operations/redriveDeadLetters.js";
import { startRedriveTask } from "../../src/operations/redriveTasks.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { testConfig } from "../support/testConfig.js";
import { addDeadLetters, fieldValue, rawEntries } from "./deadLetterFixtures.js";

/**
 * Redrive by age (issue 34 item 2, "by reason, by age"): as dlq purge --older-than, a dead
 * letter's age is its dead-letter id's time on the Redis clock; the range ends at the cutoff.
 */
const fixture = useRedisServer();

async function redisNowMs(): Promise<number> {
  const [seconds, micros] = (await fixture.redis.call("TIME")) as [string, string];
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Three dead letters two hours old, two of another group as old, two fresh ones. */
async function agedDeadLetters(stream: string) {
  const group = groupConfig(stream);
  const dead = group.deadLetterStream;
  await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
  const now = await redisNowMs();
  const add = (groupName: string, count: number, atMs: number, firstOriginal: number) =>
    addDeadLetters(fixture.redis, {
      stream,
      group: groupName,
      deadLetterStream: dead,
      count,
      atMs,
      firstOriginal,
    });
  await add("workers", 3, now - 7_200_000, 1);
  await add("audit", 2, now - 7_100_000, 10);
  await add("workers", 2, now - 1000, 20);
  return group;
}

const originals = (entries: [string, Buffer[]][]): (string | undefined)[] =>
  entries.map(([, fields]) => fieldValue(fields, "x-original-id"));

describe("redrive by age", () => {
  it("moves only the group's dead letters older than olderThanMs (dry run counts the same)", async () => {
    const stream = uniquePrefix("redrive-age");
    const group = await agedDeadLetters(stream);
    const redis = registerScripts(fixture.redis);
    const base = {
      limit: Number.POSITIVE_INFINITY,
      reason: undefined,
      limiter: new RateLimiter({ ratePerSecond: 0 }),
      olderThanMs: 5_400_000,
    };
    const dry = await redriveDeadLetters(redis, group, { ...base, dryRun: true });
    expect(dry).toEqual({ redriven: 3, remaining: 2, dryRun: true });
    const summary = await redriveDeadLetters(redis, group, { ...base, dryRun: false });
    expect(summary).toEqual({ redriven: 3, remaining: 2, dryRun: false });
    expect(originals(await rawEntries(fixture.redis, stream))).toEqual([
      "1000-1",
      "1000-2",
      "1000-3",
    ]);
    expect(originals(await rawEntries(fixture.redis, group.deadLetterStream))).toEqual([
      "1000-10",
      "1000-11",
      "1000-20",
      "1000-21",
    ]);
  });

  it("a task started with olderThanMs selects the old dead letters only (its range ends at the cutoff)", async () => {
    const stream = uniquePrefix("task-age");
    const group = await agedDeadLetters(stream);
    const before = await redisNowMs();
    const task = await startRedriveTask(registerScripts(fixture.redis), group, {
      leaseKey: `${stream}:lease`,
      reason: undefined,
      olderThanMs: 5_400_000,
      limit: Number.POSITIVE_INFINITY,
      to: undefined,
      rate: 0,
      startedBy: "alice",
      keepMs: 3_600_000,
    });
    expect(task.toMove).toBe(3);
    const after = await redisNowMs();
    const endMs = Number(task.endId.split("-")[0]);
    expect(endMs).toBeGreaterThanOrEqual(before - 5_400_000);
    expect(endMs).toBeLessThanOrEqual(after - 5_400_000);
  });

  it("dlq redrive --older-than D on the command line; refused beside --id", async () => {
    const prefix = uniquePrefix("redrive-age-cli");
    const stream = `${prefix}:stream`;
    await agedDeadLetters(stream);
    const file = await writeConfigFile(testConfig(fixture.server.url, prefix, [{}]));
    try {
      const pair = ["--stream", stream, "--group", "workers", "--config", file.path];
      const moved = await runCli(["dlq", "redrive", ...pair, "--older-than", "90m", "--json"]);
      expect(moved.stderr).toBe("");
      expect(JSON.parse(moved.stdout)).toEqual({ redriven: 3, remaining: 2, dryRun: false });
      expect(moved.code).toBe(0);
      const mixed = await runCli(["dlq", "redrive", ...pair, "--older-than", "1h", "--id", "1-1"]);
      expect(mixed.stderr).toContain("cannot be combined with --older-than");
      expect(mixed.code).toBe(2);
    } finally {
      await file.remove();
    }
  });
});
