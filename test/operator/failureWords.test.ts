import { afterEach, describe, expect, it } from "vitest";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import { freePort, uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";

const fixture = useRedisServer();
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function configPath(url: string, prefix: string): Promise<string> {
  const config = testConfig(url, prefix, [{}]);
  const file = await writeConfigFile(config);
  cleanups.push(file.remove);
  return file.path;
}

function commandsFor(prefix: string, path: string): string[][] {
  const pair = ["--stream", `${prefix}:stream`, "--group", "workers"];
  return [
    ["inspect", "--config", path],
    ["dlq", "list", ...pair, "--config", path],
    ["events", "--config", path],
  ];
}

describe("operator commands say a Redis failure in one line", () => {
  it("Redis down: inspect, dlq list and events print the refusal and its remedy, exit 1, no stack", async () => {
    const prefix = uniquePrefix("words-down");
    // A port nothing listens on: freePort closes what it opened.
    const port = await freePort();
    const path = await configPath(`redis://127.0.0.1:${port}`, prefix);
    for (const args of commandsFor(prefix, path)) {
      const result = await runCli(args);
      const words = args[0] === "dlq" ? "dlq list" : args[0];
      expect(result.code, args.join(" ")).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr).toBe(
        `stream-janitor ${words}: cannot reach Redis at 127.0.0.1:${port}: connection refused by 127.0.0.1:${port} (ECONNREFUSED): nothing listens there; is Redis running, and is redis.url right?\n`,
      );
    }
  });

  it("wrong password: one WRONGPASS line naming the settings to check, exit 1, no stack", async () => {
    const prefix = uniquePrefix("words-auth");
    await fixture.redis.call("ACL", "SETUSER", `${prefix}-u`, "on", ">right", "~*", "&*", "+@all");
    cleanups.push(async () => {
      await fixture.redis.call("ACL", "DELUSER", `${prefix}-u`);
    });
    const url = fixture.server.url.replace("redis://", `redis://${prefix}-u:wrong@`);
    const path = await configPath(url, prefix);
    for (const args of commandsFor(prefix, path)) {
      const result = await runCli(args);
      const words = args[0] === "dlq" ? "dlq list" : args[0];
      expect(result.code, args.join(" ")).toBe(1);
      expect(result.stderr).toBe(
        `stream-janitor ${words}: authentication failed at 127.0.0.1:${fixture.server.port} (WRONGPASS): check the user and redis.password or redis.passwordFile\n`,
      );
    }
  });
});
