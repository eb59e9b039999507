import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { addDeadLetters, rawEntries } from "./deadLetterFixtures.js";

const fixture = useRedisServer();
const cleanups: (() => Promise<void>)[] = [];
const CLI = new URL("../../dist/cli.js", import.meta.url).pathname;

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The CLI on a pseudo-terminal (util-linux `script`), `typed` as the operator's keystrokes. */
async function onTerminal(args: readonly string[], typed: string) {
  const command = [process.execPath, CLI, ...args].map((a) => `'${a}'`).join(" ");
  const run = promisify(execFile)("script", ["-qec", command, "/dev/null"]);
  run.child.stdin?.end(typed);
  try {
    const { stdout } = await run;
    return { code: 0, output: stdout.replaceAll("\r\n", "\n") };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, output: failed.stdout.replaceAll("\r\n", "\n") };
  }
}

async function deadLetters(name: string) {
  const stream = uniquePrefix(name);
  const dead = `{${stream}}:dead`;
  await fixture.redis.xgroup("CREATE", stream, "billing", "$", "MKSTREAM");
  await addDeadLetters(fixture.redis, {
    stream,
    group: "billing",
    deadLetterStream: dead,
    count: 3,
  });
  const file = await writeConfigFile({ redis: { url: fixture.server.url } });
  cleanups.push(file.remove);
  const base = ["dlq", "purge", "--stream", stream, "--group", "billing", "--config", file.path];
  return { stream, dead, base };
}

describe("dlq purge --all on a terminal", () => {
  it("asks for the group's name typed back: a wrong answer purges nothing (exit 1), the name purges", async () => {
    const { dead, base } = await deadLetters("purge-confirm");
    const refused = await onTerminal([...base, "--all"], "bil\n");
    expect(refused.output).toContain("type the group's name (billing) to confirm:");
    expect(refused.output).toContain("not confirmed: nothing purged");
    expect(refused.code).toBe(1);
    expect(await fixture.redis.xlen(dead)).toBe(3);

    const confirmed = await onTerminal([...base, "--all"], "billing\n");
    expect(confirmed.code).toBe(0);
    expect(confirmed.output).toContain("purged 3 dead letter(s)");
    expect(await fixture.redis.xlen(dead)).toBe(0);
  });

  it("--yes does not ask; without a terminal nothing is asked, as before", async () => {
    const first = await deadLetters("purge-yes");
    const yes = await onTerminal([...first.base, "--all", "--yes"], "");
    expect(yes.output).not.toContain("to confirm");
    expect(yes.code).toBe(0);
    expect(await fixture.redis.xlen(first.dead)).toBe(0);

    const second = await deadLetters("purge-piped");
    const piped = await runCli([...second.base, "--all"]);
    expect(piped.code).toBe(0);
    expect(piped.stderr).toBe("");
    expect(await fixture.redis.xlen(second.dead)).toBe(0);
  });

  it("--save FILE writes what it removes first, as JSON lines, bodies byte-exact", async () => {
    const { dead, base } = await deadLetters("purge-save");
    const before = await rawEntries(fixture.redis, dead);
    const dir = await mkdtemp(join(tmpdir(), "sj-save-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, "purged.jsonl");
    const result = await runCli([...base, "--all", "--save", path]);
    expect(result.code).toBe(0);
    expect(await fixture.redis.xlen(dead)).toBe(0);
    const saved = (await readFile(path, "utf8"))
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { id: string; fields: Record<string, string>[][] });
    expect(saved.map((entry) => entry.id)).toEqual(before.map(([id]) => id));
    const decode = (value: Record<string, string>): Buffer =>
      value.base64 === undefined
        ? Buffer.from(value.utf8 ?? "", "utf8")
        : Buffer.from(value.base64, "base64");
    for (const [index, entry] of saved.entries()) {
      const bytes = entry.fields.flatMap((pair) => pair.map(decode));
      expect(bytes).toEqual(before[index]?.[1]);
    }
    // Bytes that are not UTF-8 are base64; the others are UTF-8 text.
    expect(JSON.stringify(saved[0])).toContain('{"base64":');
    expect(JSON.stringify(saved[0])).toContain('{"utf8":"order"}');
  });
});
