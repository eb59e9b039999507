import { describe, expect, it } from "vitest";
import { runCli } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { useConfigFiles } from "../support/useConfigFiles.js";
import { addDeadLetters } from "../operator/deadLetterFixtures.js";

const fixture = useRedisServer();
const configPath = useConfigFiles();

/** No --config and no STREAM_JANITOR_CONFIG, whatever the environment running the tests has. */
const NO_CONFIG_ENV = { STREAM_JANITOR_CONFIG: undefined };

describe("durations with units", () => {
  it("are read in every *Ms key of the file and printed by check-config in milliseconds", async () => {
    const path = await configPath({
      lease: { ttlMs: "15s", renewDeadlineMs: "10s", retryPeriodMs: "2s", waitTimeoutMs: "500ms" },
      sweep: { intervalMs: "5m", maxScriptMs: "2ms" },
      metrics: { pelScanIntervalMs: "1m", scrapeTimeoutMs: 2500 },
      discovery: { intervalMs: "1h" },
      groups: [{ stream: "s", group: "g", minIdleMs: "30s", reapConsumersIdleMs: "7d" }],
      discover: [{ match: "tenant:*", minIdleMs: "2h" }],
      retention: [{ stream: "s", maxAgeMs: "7d" }],
    });
    const result = await runCli(["check-config", "--offline", "--config", path]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const printed = JSON.parse(result.stdout) as Record<string, Record<string, unknown>[]> &
      Record<string, Record<string, unknown>>;
    expect(printed.lease).toMatchObject({
      ttlMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2000,
      waitTimeoutMs: 500,
    });
    expect(printed.sweep).toMatchObject({ intervalMs: 300_000, maxScriptMs: 2 });
    expect(printed.metrics).toMatchObject({ pelScanIntervalMs: 60_000, scrapeTimeoutMs: 2500 });
    expect(printed.discovery).toMatchObject({ intervalMs: 3_600_000 });
    expect(printed.groups?.[0]).toMatchObject({
      minIdleMs: 30_000,
      reapConsumersIdleMs: 604_800_000,
    });
    expect(printed.discover?.[0]).toMatchObject({ minIdleMs: 7_200_000 });
    expect(printed.retention?.[0]).toMatchObject({ maxAgeMs: 604_800_000 });
  });

  it.each([
    [{ sweep: { intervalMs: "5 minutes" } }, "sweep.intervalMs", "5 minutes"],
    [{ groups: [{ stream: "s", group: "g", minIdleMs: "1.5s" }] }, "groups[0].minIdleMs", "1.5s"],
    [{ discover: [{ match: "x*", minIdleMs: "5y" }] }, "discover[0].minIdleMs", "5y"],
    [{ retention: [{ stream: "s", maxAgeMs: "soon" }] }, "retention[0].maxAgeMs", "soon"],
  ])(
    "a bad duration exits 78 naming the key, the value and the form: %j",
    async (config, key, value) => {
      const result = await runCli([
        "check-config",
        "--offline",
        "--config",
        await configPath(config),
      ]);
      expect(result.code).toBe(78);
      expect(result.stderr).toContain(key);
      expect(result.stderr).toContain(value);
      expect(result.stderr).toContain("30s");
    },
  );

  it.each([
    [["dlq", "purge", "--stream", "s", "--group", "g", "--older-than", "5x"], "--older-than"],
    [
      ["dlq", "purge", "--stream", "s", "--group", "g", "--older-than-ms", "1h2"],
      "--older-than-ms",
    ],
    [["consumers", "reap", "--stream", "s", "--group", "g", "--idle", "soon"], "--idle"],
    [["trim", "--stream", "s", "--max-age", "1.5h"], "--max-age"],
  ])("a bad duration option exits 2 naming it: %j", async (args, option) => {
    const result = await runCli(args, NO_CONFIG_ENV);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(option);
    expect(result.stderr).toContain("30s");
  });

  it("consumers reap --idle takes a unit", async () => {
    const stream = uniquePrefix("reap-units");
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    await fixture.redis.xgroup("CREATECONSUMER", stream, "workers", "idle-worker");
    const path = await configPath({ redis: { url: fixture.server.url } });
    const reap = (idle: string) =>
      runCli([
        "consumers",
        "reap",
        "--config",
        path,
        "--stream",
        stream,
        "--group",
        "workers",
        "--idle",
        idle,
        "--dry-run",
        "--json",
      ]);
    const hour = await reap("1h");
    expect(hour.stderr).toBe("");
    expect(JSON.parse(hour.stdout)).toMatchObject({ reaped: [] });
    const now = await reap("0ms");
    expect(JSON.parse(now.stdout)).toMatchObject({ reaped: ["idle-worker"] });
  });

  it("trim --max-age takes a unit; --max-age-ms keeps working", async () => {
    const stream = uniquePrefix("trim-units");
    await fixture.redis.xadd(stream, "1-0", "n", "old");
    await fixture.redis.xadd(stream, "*", "n", "new");
    const path = await configPath({ redis: { url: fixture.server.url } });
    const dry = await runCli([
      "trim",
      "--config",
      path,
      "--stream",
      stream,
      "--max-age-ms",
      "3600000",
      "--dry-run",
      "--json",
    ]);
    expect(JSON.parse(dry.stdout)).toMatchObject({ removed: 1, dryRun: true });
    const result = await runCli([
      "trim",
      "--config",
      path,
      "--stream",
      stream,
      "--max-age",
      "1h",
      "--json",
    ]);
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toMatchObject({ removed: 1, length: 1 });
  });

  it("dlq purge --older-than takes a unit", async () => {
    const stream = uniquePrefix("purge-units");
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: `{${stream}}:dead`,
      count: 3,
    });
    const path = await configPath({ redis: { url: fixture.server.url } });
    const purge = (olderThan: string) =>
      runCli([
        "dlq",
        "purge",
        "--config",
        path,
        "--stream",
        stream,
        "--group",
        "workers",
        "--older-than",
        olderThan,
        "--json",
      ]);
    const hour = await purge("1h");
    expect(hour.stderr).toBe("");
    expect(JSON.parse(hour.stdout)).toMatchObject({ purged: 0, remaining: 3 });
    expect(JSON.parse((await purge("1ms")).stdout)).toMatchObject({ purged: 3, remaining: 0 });
  });
});
