import { describe, expect, it } from "vitest";
import {
  OPERATOR_COMMANDS,
  runOperatorCommand,
} from "../../src/commands/operator/runOperatorCommand.js";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import {
  addDeadLetterReaders,
  addDeadLetters,
  addWorkersDeadLetters,
} from "./deadLetterFixtures.js";

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
    [["dlq", "purge", "--stream", "s", "--group", "g"], "--all"],
    [["dlq", "purge", "--stream", "s", "--group", "g", "--dry-run"], "--all"],
    [["dlq", "purge", "--stream", "s", "--group", "g", "--all", "--id", "1-1"], "--id"],
    [["dlq", "purge", "--stream", "s", "--group", "g", "--all", "--reason", "action"], "--all"],
    [["dlq", "purge", "--stream", "s", "--group", "g", "--id", "latest"], "--id"],
    [
      ["dlq", "redrive", "--stream", "s", "--group", "g", "--id", "1-1", "--reason", "action"],
      "--id",
    ],
    [["dlq", "redrive", "--stream", "s", "--group", "g", "--id", "12"], "--id"],
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

  it("says which groups of the dead-letter stream held dead letters back, in words and in --json", async () => {
    const stream = uniquePrefix("cli-held");
    const dead = `{${stream}}:dead`;
    const letters = await addWorkersDeadLetters(fixture.redis, stream, dead, 10);
    await addDeadLetterReaders(fixture.redis, dead, letters);
    const config = await writeConfigFile({ redis: { url: fixture.server.url } });
    try {
      const base = ["--stream", stream, "--group", "workers", "--config", config.path];
      const dry = await runCli(["dlq", "purge", ...base, "--all", "--dry-run"]);
      expect(dry.code).toBe(0);
      expect(dry.stdout).toContain("would purge 2 dead letter(s)");
      expect(dry.stdout).toMatch(/held back by group archivers \(1\), group auditors \(8\)/u);

      const purge = await runCli(["dlq", "purge", ...base, "--all", "--json"]);
      expect(purge.code).toBe(0);
      expect(JSON.parse(purge.stdout)).toEqual({
        purged: 2,
        remaining: 8,
        dryRun: false,
        heldBackBy: [
          { group: "archivers", entries: 1 },
          { group: "auditors", entries: 8 },
        ],
      });

      const redrive = await runCli(["dlq", "redrive", ...base, "--json"]);
      expect(redrive.code).toBe(0);
      expect(JSON.parse(redrive.stdout)).toEqual({
        redriven: 0,
        remaining: 8,
        dryRun: false,
        heldBackBy: [
          { group: "archivers", entries: 1 },
          { group: "auditors", entries: 8 },
        ],
      });
      expect(await fixture.redis.xlen(dead)).toBe(8);
    } finally {
      await config.remove();
    }
  });

  it("acts on the --id dead letters and reports, with exit 1, the ids that are not the group's", async () => {
    const stream = uniquePrefix("cli-ids");
    const dead = `{${stream}}:dead`;
    const letters = await addWorkersDeadLetters(fixture.redis, stream, dead, 3);
    const config = await writeConfigFile({ redis: { url: fixture.server.url } });
    try {
      const base = ["--stream", stream, "--group", "workers", "--config", config.path];
      const first = letters[0]?.id ?? "";
      const second = letters[1]?.id ?? "";
      const redrive = await runCli(["dlq", "redrive", ...base, "--id", first, "--id", "1-1"]);
      expect(redrive.code).toBe(1);
      expect(redrive.stdout).toContain("redriven 1 dead letter(s)");
      expect(redrive.stderr).toContain(`not a dead letter of ${stream}/workers: 1-1`);

      const purge = await runCli([
        "dlq",
        "purge",
        ...base,
        "--id",
        second,
        "--id",
        "2-2",
        "--json",
      ]);
      expect(purge.code).toBe(1);
      expect(JSON.parse(purge.stdout)).toEqual({
        purged: 1,
        remaining: 1,
        dryRun: false,
        unknownIds: ["2-2"],
      });
      expect(purge.stderr).toContain("2-2");
      expect(await fixture.redis.xlen(dead)).toBe(1);
    } finally {
      await config.remove();
    }
  });
});
