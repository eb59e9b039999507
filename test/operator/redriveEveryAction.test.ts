import { describe, expect, it } from "vitest";
import { DEAD_LETTER_REASONS } from "../../src/core/copyMetadata.js";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import { pendingEntries, streamEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { addDeadLetters } from "./deadLetterFixtures.js";

const fixture = useRedisServer();

/** billing (reassign) and audit read one stream; billing has dead letters. */
async function reassignGroupWithDeadLetters(name: string, reason?: "max-deliveries" | "action") {
  const stream = uniquePrefix(name);
  const dead = `{${stream}}:dead`;
  await fixture.redis.xgroup("CREATE", stream, "billing", "$", "MKSTREAM");
  await fixture.redis.xgroup("CREATE", stream, "audit", "$");
  await addDeadLetters(fixture.redis, {
    stream,
    group: "billing",
    deadLetterStream: dead,
    count: 2,
    ...(reason === undefined ? {} : { reason }),
  });
  const config = await writeConfigFile({
    redis: { url: fixture.server.url },
    groups: [
      { stream, group: "billing", action: "reassign" },
      { stream, group: "audit", action: "requeue", retryLane: true },
    ],
  });
  const base = ["--config", config.path, "--stream", stream, "--group", "billing"];
  return { stream, dead, base, remove: config.remove };
}

describe("dlq redrive for every action", () => {
  it("redrives a reassign group's dead letters into its own retry lane, which only it reads", async () => {
    const { stream, dead, base, remove } = await reassignGroupWithDeadLetters("redrive-reassign");
    try {
      const refused = await runCli(["dlq", "redrive", ...base]);
      expect(refused.code).toBe(1);
      // The hint names an option that works for a reassign group.
      expect(refused.stderr).toContain("--to lane");
      expect(refused.stderr).not.toContain("use action reassign");

      const lane = `{${stream}}:billing:retry`;
      const moved = await runCli(["dlq", "redrive", ...base, "--to", "lane", "--json"]);
      expect(moved.stderr).toBe("");
      expect(moved.code).toBe(0);
      expect(JSON.parse(moved.stdout)).toMatchObject({ redriven: 2, remaining: 0 });
      expect(await fixture.redis.xlen(dead)).toBe(0);
      expect(await fixture.redis.xlen(stream)).toBe(0);
      const copies = await streamEntries(fixture.redis, lane);
      expect(copies.map((c) => c.fields.get("x-original-id"))).toEqual(["1000-1", "1000-2"]);
      // The lane has billing's group, at 0: its consumers get both copies, nobody else does.
      const groups = (await fixture.redis.call("XINFO", "GROUPS", lane)) as unknown[][];
      expect(groups.map((g) => g[1])).toEqual(["billing"]);
      await fixture.redis.call("XREADGROUP", "GROUP", "billing", "c1", "STREAMS", lane, ">");
      expect(await pendingEntries(fixture.redis, lane, "billing")).toHaveLength(2);
    } finally {
      await remove();
    }
  });

  it("accepts every reason the janitor writes, max-idle included, in list, redrive and purge", async () => {
    expect([...DEAD_LETTER_REASONS].sort()).toEqual(["action", "max-deliveries", "max-idle"]);
    const { base, remove } = await reassignGroupWithDeadLetters("reason-max-idle");
    try {
      for (const command of [
        ["dlq", "list"],
        ["dlq", "redrive", "--to", "lane", "--dry-run"],
        ["dlq", "purge", "--dry-run"],
      ]) {
        const result = await runCli([...command, ...base, "--reason", "max-idle"]);
        expect(result.stderr).not.toContain("--reason expects");
        expect(result.code).toBe(0);
      }
    } finally {
      await remove();
    }
  });
});
