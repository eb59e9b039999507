import { describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/defaultConfig.js";
import type { StatusReport } from "../../src/core/groupStatus.js";
import { runCli } from "../support/daemonProcess.js";
import { freePort, uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { useConfigFiles } from "../support/useConfigFiles.js";

/**
 * `stream-janitor status` with Redis but no janitor: nothing listens at http.host:http.port, so
 * the command samples the configured groups itself over its own short window and says so.
 */
const fixture = useRedisServer();
const configPath = useConfigFiles();

async function setUp(name: string): Promise<{ path: string; prefix: string; port: number }> {
  const prefix = uniquePrefix(name);
  const stream = `${prefix}:stream`;
  // billing: 4 entries wait and nobody reads (STOP). audit: created at the end, nothing waits.
  await fixture.redis.xgroup("CREATE", stream, "billing", "0", "MKSTREAM");
  await fixture.redis.xgroup("CREATE", stream, "audit", "$");
  for (let i = 0; i < 4; i += 1) await fixture.redis.xadd(stream, "*", "n", String(i));
  await fixture.redis.xgroup("SETID", stream, "audit", "$");
  const port = await freePort();
  const config = testConfig(
    fixture.server.url,
    prefix,
    [{ group: "billing" }, { group: "audit" }],
    { http: { ...defaultConfig().http, host: "127.0.0.1", port } },
  );
  return { path: await configPath(config), prefix, port };
}

describe("stream-janitor status with no janitor answering", () => {
  it("samples by itself over a window it names, and exits 1 on a bad status", async () => {
    const { path, port } = await setUp("self-text");
    const result = await runCli(["status", "--config", path, "--window", "300ms"]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toMatch(
      new RegExp(
        `^no janitor answered at http://127\\.0\\.0\\.1:${port}/status\\.json: sampled by this ` +
          `command, 3 samples over 300ms, redis [\\d.]+ standalone`,
        "u",
      ),
    );
    expect(result.stdout).toMatch(/\n\S+:stream\s+billing\s+STOP\s.*the group has no consumer/u);
    expect(result.stdout).toMatch(/\n\S+:stream\s+audit\s+OK\s/u);
    expect(result.stderr).toBe("");
  });

  it("--json says sampledBy command, with the window it sampled", async () => {
    const { path } = await setUp("self-json");
    const result = await runCli(["status", "--config", path, "--json", "--window", "300ms"]);
    expect(result.code, result.stderr).toBe(1);
    const report = JSON.parse(result.stdout) as StatusReport & { sampledBy?: string };
    expect(report.sampledBy).toBe("command");
    expect(report.sampling).toEqual({ intervalMs: 150, window: 3 });
    expect(report.leader.isLeader).toBe(false);
    const statuses = Object.fromEntries(report.groups.map((g) => [g.group, g.status]));
    expect(statuses).toEqual({ billing: "STOP", audit: "OK" });
  });

  it("exits 0 when every group is OK, and by default samples 3 times over 2s", async () => {
    const prefix = uniquePrefix("self-ok");
    await fixture.redis.xgroup("CREATE", `${prefix}:stream`, "workers", "$", "MKSTREAM");
    const port = await freePort();
    const config = testConfig(fixture.server.url, prefix, [{}], {
      http: { ...defaultConfig().http, host: "127.0.0.1", port },
    });
    const result = await runCli(["status", "--config", await configPath(config)]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("sampled by this command, 3 samples over 2s");
  });

  it("--url names a janitor: no sampling when it does not answer", async () => {
    const { path } = await setUp("self-url");
    const url = `http://127.0.0.1:${await freePort()}`;
    const result = await runCli(["status", "--config", path, "--url", url]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`no janitor answered at ${url}/status.json`);
  });
});
