import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { useConfigFiles } from "../support/useConfigFiles.js";

const fixture = useRedisServer();
const cleanups: (() => Promise<void>)[] = [];

afterAll(async () => {
  await Promise.all(cleanups.map((cleanup) => cleanup()));
});

const configPath = useConfigFiles();

describe("check-config against Redis", () => {
  it("exits 0 and prints the configuration when run would refuse nothing", async () => {
    const prefix = uniquePrefix("cc-good");
    await fixture.redis.xgroup("CREATE", `${prefix}:stream`, "workers", "$", "MKSTREAM");
    const path = await configPath(testConfig(fixture.server.url, prefix, [{}]));
    const result = await runCli(["check-config", "--config", path]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ groups: [{ stream: `${prefix}:stream` }] });
  });

  it("reports a requeue into a stream other groups read, in run's words, and exits 1", async () => {
    const prefix = uniquePrefix("cc-fanout");
    const stream = `${prefix}:stream`;
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    await fixture.redis.xgroup("CREATE", stream, "analytics", "$");
    const path = await configPath(testConfig(fixture.server.url, prefix, [{}]));
    const result = await runCli(["check-config", "--config", path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `refusing to requeue ${stream}/workers: requeue stream ${stream} is also read by group(s) analytics`,
    );
  });

  it("reports every missing stream and group, as a sweep reports them, and exits 1", async () => {
    const prefix = uniquePrefix("cc-missing");
    const stream = `${prefix}:stream`;
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    const path = await configPath(
      testConfig(fixture.server.url, prefix, [
        { group: "wokrers", action: "reassign" },
        { stream: `${prefix}:nope`, action: "monitor" },
        {},
      ]),
    );
    const result = await runCli(["check-config", "--config", path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`stream ${stream} has no group wokrers`);
    expect(result.stderr).toContain(`stream ${prefix}:nope does not exist`);
    expect(result.stderr).not.toContain(`${stream}/workers`);
  });

  it("reports what the ACL user may not do, with run's advice, and exits 1", async () => {
    const prefix = uniquePrefix("cc-acl");
    const stream = `${prefix}:stream`;
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    const user = `${prefix}-user`;
    await fixture.redis.call("ACL", "SETUSER", user, "on", ">pw", "~*", "+@all", "-xinfo");
    cleanups.push(async () => {
      await fixture.redis.call("ACL", "DELUSER", user);
    });
    const url = fixture.server.url.replace("redis://", `redis://${user}:pw@`);
    const path = await configPath(testConfig(url, prefix, [{}]));
    const result = await runCli(["check-config", "--config", path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("NOPERM");
    expect(result.stderr).toContain("xinfo");
    expect(result.stderr).not.toContain("pw@");
  });

  it("says clearly that Redis cannot be reached, suggests --offline, and exits 1", async () => {
    const path = await configPath(testConfig("redis://127.0.0.1:1", uniquePrefix("cc-down"), [{}]));
    const result = await runCli(["check-config", "--config", path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("cannot reach Redis");
    expect(result.stderr).toContain("ECONNREFUSED");
    expect(result.stderr).toContain("--offline");
    expect(result.stderr).not.toMatch(/\n\s+at /u);
  });

  it("--offline validates without contacting Redis", async () => {
    const path = await configPath(testConfig("redis://127.0.0.1:1", uniquePrefix("cc-off"), [{}]));
    const result = await runCli(["check-config", "--offline", "--config", path]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
  });
});
