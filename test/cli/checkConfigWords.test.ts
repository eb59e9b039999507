import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { useConfigFiles } from "../support/useConfigFiles.js";

const fixture = useRedisServer();
const cleanups: (() => Promise<void>)[] = [];
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;

afterAll(async () => {
  await Promise.all(cleanups.map((cleanup) => cleanup()));
});

const configPath = useConfigFiles();

/** The CLI on a pseudo-terminal (util-linux `script`), as an operator runs it: its output. */
async function onTerminal(args: readonly string[]): Promise<{ code: number; output: string }> {
  const command = [process.execPath, CLI, ...args].map((a) => `'${a}'`).join(" ");
  try {
    const { stdout } = await promisify(execFile)("script", ["-qec", command, "/dev/null"]);
    return { code: 0, output: stdout.replaceAll("\r\n", "\n") };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, output: failed.stdout.replaceAll("\r\n", "\n") };
  }
}

const count = (text: string, part: string): number => text.split(part).length - 1;

describe("check-config in the operator's words", () => {
  it("says a missing stream once, naming the groups configured on it", async () => {
    const prefix = uniquePrefix("cc-words-nostream");
    const stream = `${prefix}:nope`;
    const path = await configPath(
      testConfig(fixture.server.url, prefix, [
        { stream, group: "billing", action: "monitor" },
        { stream, group: "shipping", action: "monitor" },
      ]),
    );
    const result = await runCli(["check-config", "--config", path]);
    expect(result.code).toBe(1);
    expect(count(result.stderr, "does not exist")).toBe(1);
    expect(result.stderr).toContain(
      `stream ${stream} does not exist (configured for groups billing, shipping)`,
    );
  });

  it("suggests the nearest existing group for a misspelt one, and lists the stream's groups", async () => {
    const prefix = uniquePrefix("cc-words-group");
    const stream = `${prefix}:stream`;
    await fixture.redis.xgroup("CREATE", stream, "billing", "$", "MKSTREAM");
    await fixture.redis.xgroup("CREATE", stream, "shipping", "$");
    const path = await configPath(
      testConfig(fixture.server.url, prefix, [{ group: "biling", action: "monitor" }]),
    );
    const result = await runCli(["check-config", "--config", path]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `stream ${stream} has no group biling; did you mean billing? (groups on stream ${stream}: billing, shipping)`,
    );
  });

  it("suggests the nearest key for a misspelt one, in a group, a section and at the top", async () => {
    const path = await configPath({
      redis: { urll: "redis://127.0.0.1:6379" },
      retentoin: [],
      groups: [{ stream: "orders", group: "billing", minIdelMs: 5000 }],
    });
    const result = await runCli(["check-config", "--offline", "--config", path]);
    expect(result.code).toBe(78);
    expect(result.stderr).toContain("groups[0].minIdelMs = 5000: expected a known group key");
    expect(result.stderr).toContain("did you mean minIdleMs?");
    expect(result.stderr).toContain("did you mean url?");
    expect(result.stderr).toContain("did you mean retention?");
  });

  it("on a terminal, ends with one ok line when all is well (online and --offline)", async () => {
    const prefix = uniquePrefix("cc-words-ok");
    await fixture.redis.xgroup("CREATE", `${prefix}:stream`, "workers", "$", "MKSTREAM");
    const path = await configPath(testConfig(fixture.server.url, prefix, [{}]));
    const online = await onTerminal(["check-config", "--config", path]);
    expect(online.code).toBe(0);
    expect(online.output.trimEnd().split("\n").at(-1)).toBe(
      `stream-janitor check-config: ok: run would sweep 1 group(s) at 127.0.0.1:${fixture.server.port} and refuse none`,
    );
    const offline = await onTerminal(["check-config", "--offline", "--config", path]);
    expect(offline.code).toBe(0);
    expect(offline.output.trimEnd().split("\n").at(-1)).toBe(
      "stream-janitor check-config: ok: the file is valid (Redis not asked: --offline)",
    );
  });
});
