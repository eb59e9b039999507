import { describe, expect, it } from "vitest";
import {
  OPERATOR_COMMANDS,
  runOperatorCommand,
} from "../../src/commands/operator/runOperatorCommand.js";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { addDeadLetters } from "./deadLetterFixtures.js";

const fixture = useRedisServer();

/** In-process, for the cases that end before any connection: no process to spawn. */
async function runInProcess(args: string[]) {
  let stdout = "";
  let stderr = "";
  const io = {
    stdout: { write: (chunk: string) => (stdout += chunk) } as unknown as NodeJS.WritableStream,
    stderr: { write: (chunk: string) => (stderr += chunk) } as unknown as NodeJS.WriteStream,
  };
  const code = await runOperatorCommand(args, io);
  return { code, stdout, stderr };
}

describe("operator command line", () => {
  it.each(OPERATOR_COMMANDS.map((command) => [command.words.join(" "), command] as const))(
    "%s has its own --help with options and examples",
    (_, command) => {
      expect(command.help).toMatch(
        new RegExp(`^Usage: stream-janitor ${command.words.join(" ")}`, "u"),
      );
      expect(command.help).toContain("Examples:");
      for (const option of Object.keys(command.options))
        expect(command.help).toContain(`--${option}`);
    },
  );

  it("prints a command's help on --help and exits 0", async () => {
    const result = await runCli(["dlq", "redrive", "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("--rate N");
  });

  it.each([
    [["dlq", "redrive", "--group", "g"], "--stream is required"],
    [["dlq"], "missing sub-command"],
    [["consumers", "reap", "--stream", "s", "--group", "g"], "--idle-ms is required"],
    [["trim", "--stream", "s"], "exactly one of --max-len and --max-age-ms"],
    [
      ["dlq", "purge", "--stream", "s", "--group", "g", "--reason", "bored"],
      "--reason expects one of",
    ],
    [["dlq", "list", "--stream", "s", "--group", "g", "--limit", "-3"], "--limit"],
    [["inspect", "--bogus"], "bogus"],
  ])("exits 2 on %j", async (args, message) => {
    const result = await runInProcess(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it("exits 78 on a bad configuration", async () => {
    const file = await writeConfigFile({ retention: [{ stream: "s", maxLen: -1 }] });
    try {
      const result = await runInProcess(["inspect", "--config", file.path]);
      expect(result.code).toBe(78);
      expect(result.stderr).toContain("retention[0].maxLen");
    } finally {
      await file.remove();
    }
  });

  it("refuses to redrive into a stream other groups read, naming them (exit 1)", async () => {
    const stream = uniquePrefix("cli-refused");
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    await fixture.redis.xgroup("CREATE", stream, "analytics", "$");
    await addDeadLetters(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: `{${stream}}:dead`,
      count: 1,
    });
    const file = await writeConfigFile({});
    const result = await runCli(
      ["dlq", "redrive", "--config", file.path, "--stream", stream, "--group", "workers", "--json"],
      {
        STREAM_JANITOR_REDIS_URL: fixture.server.url,
      },
    ).finally(() => file.remove());
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/refusing to redrive .*analytics/u);
    expect(await fixture.redis.xlen(`{${stream}}:dead`)).toBe(1);
  });
});
