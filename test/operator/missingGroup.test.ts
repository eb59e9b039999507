import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { addDeadLetters } from "./deadLetterFixtures.js";

const fixture = useRedisServer();
let configPath = "";
let remove: () => Promise<void> = () => Promise.resolve();
const stream = uniquePrefix("typo");

beforeAll(async () => {
  const file = await writeConfigFile({ redis: { url: fixture.server.url } });
  configPath = file.path;
  remove = file.remove;
  await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
  await fixture.redis.xadd(stream, "*", "n", "1");
  // Dead letters of the real group: a typo must not report them, nor "0 done".
  await addDeadLetters(fixture.redis, {
    stream,
    group: "workers",
    deadLetterStream: `{${stream}}:dead`,
    count: 2,
  });
});

afterAll(() => remove());

const commands: [string, string[]][] = [
  ["dlq list", ["dlq", "list"]],
  ["dlq redrive", ["dlq", "redrive"]],
  ["dlq purge", ["dlq", "purge", "--older-than-ms", "0"]],
  ["consumers reap", ["consumers", "reap", "--idle-ms", "0"]],
];

describe("an operator command naming a stream or group that does not exist", () => {
  it.each(commands)("%s exits 1 naming the missing group", async (_, words) => {
    const result = await runCli([
      ...words,
      "--config",
      configPath,
      "--stream",
      stream,
      "--group",
      "wokrers",
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`stream ${stream} has no group wokrers`);
    expect(await fixture.redis.xlen(`{${stream}}:dead`)).toBe(2);
  });

  it.each(commands)("%s exits 1 naming the missing stream", async (_, words) => {
    const missing = `${stream}:nope`;
    const result = await runCli([
      ...words,
      "--config",
      configPath,
      "--stream",
      missing,
      "--group",
      "workers",
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`stream ${missing} does not exist`);
  });

  it("trim exits 1 naming the missing stream", async () => {
    const missing = `${stream}:nope`;
    const result = await runCli([
      "trim",
      "--config",
      configPath,
      "--stream",
      missing,
      "--max-len",
      "1",
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`stream ${missing} does not exist`);
  });

  it("inspect reports the missing group and still reports the others", async () => {
    const file = await writeConfigFile({
      redis: { url: fixture.server.url },
      groups: [
        { stream, group: "wokrers" },
        { stream, group: "workers" },
      ],
    });
    try {
      const result = await runCli(["inspect", "--config", file.path]);
      expect(result.stdout).toMatch(
        new RegExp(`wokrers.*group wokrers is missing on ${stream}`, "u"),
      );
      expect(result.stdout).toMatch(/workers\s+0\s/u);
    } finally {
      await file.remove();
    }
  });
});
