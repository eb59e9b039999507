import { describe, expect, it } from "vitest";
import { runCli } from "../support/daemonProcess.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { useConfigFiles } from "../support/useConfigFiles.js";

const fixture = useRedisServer();
const configPath = useConfigFiles();

describe("usage", () => {
  it.each([
    [[]],
    [["bogus"]],
    [["run", "extra"]],
    [["check-config", "--json"]],
    [["sweep", "--nope"]],
  ])("exits 2 with the usage for %j", async (args) => {
    const result = await runCli(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Usage:");
  });
});

describe("check-config", () => {
  it("prints the effective configuration with secrets masked", async () => {
    const path = await configPath({
      redis: { url: "redis://user:hunter2@127.0.0.1:6379", password: "s3cret" },
    });
    // --offline: the file alone (there is no Redis at that URL).
    const result = await runCli(["check-config", "--offline", "--config", path]);
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as { redis: { url: string; password: string } };
    expect(printed.redis.password).toBe("***");
    expect(result.stdout).not.toContain("hunter2");
    expect(result.stdout).not.toContain("s3cret");
  });

  it.each([
    [{ sweep: { intervalMs: -1 } }, "sweep.intervalMs"],
    [{ groups: [{ stream: "a", group: "g", maxDeliveries: 0 }] }, "groups[0].maxDeliveries"],
    [{ lease: { ttlMs: 1000, renewDeadlineMs: 2000, retryPeriodMs: 100 } }, "lease."],
    [{ unknownKey: 1 }, "unknownKey"],
    [
      { groups: [{ stream: "a", group: "g", action: "reassign", retryLane: true }] },
      "groups[0].retryLane",
    ],
    [
      {
        groups: [
          { stream: "a", group: "g" },
          { stream: "a", group: "g" },
        ],
      },
      "groups[1]",
    ],
  ])("exits 78 naming the key for %j", async (config, key) => {
    const result = await runCli(["check-config", "--config", await configPath(config)]);
    expect(result.code).toBe(78);
    expect(result.stderr).toContain(key);
    expect(result.stderr).toContain("expected");
  });

  it("exits 78 for a bad environment override and names the variable", async () => {
    const path = await configPath({});
    const result = await runCli(["check-config", "--config", path], {
      STREAM_JANITOR_HTTP_PORT: "eighty",
    });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain("http.port");
  });
});

describe("sweep --json", () => {
  it("prints the contract's summary and exits 0 when every group was swept", async () => {
    const prefix = uniquePrefix("cli-sweep");
    await addStuckEntries(fixture.redis, `${prefix}:stream`, "workers", numberedBodies(3));
    const path = await configPath(testConfig(fixture.server.url, prefix, [{ minIdleMs: 1 }]));
    const result = await runCli(["sweep", "--config", path, "--json"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      groups: [
        {
          stream: `${prefix}:stream`,
          group: "workers",
          claimed: 3,
          requeued: 3,
          reassigned: 0,
          deadLettered: 0,
          ghosts: 0,
          complete: true,
        },
      ],
    });
    expect(await fixture.redis.get(`${prefix}:lease`)).toBeNull();
  });

  it("reports a group that could not be swept with an error and exits 1", async () => {
    const prefix = uniquePrefix("cli-broken");
    await addStuckEntries(fixture.redis, `${prefix}:stream`, "workers", numberedBodies(1));
    const path = await configPath(
      testConfig(fixture.server.url, prefix, [
        { minIdleMs: 1 },
        { stream: `${prefix}:missing`, minIdleMs: 1 },
      ]),
    );
    const result = await runCli(["sweep", "--config", path, "--json"]);
    expect(result.code).toBe(1);
    const summary = JSON.parse(result.stdout) as { groups: Record<string, unknown>[] };
    expect(summary.groups[0]).toMatchObject({ claimed: 1, requeued: 1 });
    expect(summary.groups[1]).toEqual({
      stream: `${prefix}:missing`,
      group: "workers",
      error: expect.stringContaining(`${prefix}:missing`) as unknown,
    });
  });

  it("exits 1 with a clear message when Redis is unreachable", async () => {
    const path = await configPath(testConfig("redis://127.0.0.1:1", uniquePrefix("down"), [{}]));
    const result = await runCli(["sweep", "--config", path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("sweep failed");
  });
});
