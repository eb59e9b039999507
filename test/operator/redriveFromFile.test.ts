import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { addDeadLetters, fieldValue, originalFields, rawEntries } from "./deadLetterFixtures.js";

const fixture = useRedisServer();
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Three dead letters of stream/billing purged with --save: the file, and the command's base. */
async function purgedToFile(name: string) {
  const stream = uniquePrefix(name);
  const dead = `{${stream}}:dead`;
  await fixture.redis.xgroup("CREATE", stream, "billing", "$", "MKSTREAM");
  await fixture.redis.xgroup("CREATE", stream, "shipping", "$");
  await addDeadLetters(fixture.redis, {
    stream,
    group: "billing",
    deadLetterStream: dead,
    count: 3,
  });
  const config = await writeConfigFile({
    redis: { url: fixture.server.url },
    // billing's own requeue stream, so that shipping reading the source is no conflict.
    groups: [
      { stream, group: "billing", requeueStream: `{${stream}}:billing:requeue` },
      { stream, group: "shipping" },
    ],
  });
  cleanups.push(config.remove);
  const dir = await mkdtemp(join(tmpdir(), "sj-from-file-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, "purged.jsonl");
  const target = `{${stream}}:billing:requeue`;
  const select = ["--stream", stream, "--group", "billing", "--config", config.path];
  const purged = await runCli(["dlq", "purge", ...select, "--all", "--save", path]);
  expect(purged.code).toBe(0);
  expect(await fixture.redis.xlen(dead)).toBe(0);
  return { stream, target, path, config: config.path, select };
}

describe("dlq redrive --from-file", () => {
  it("brings a dlq purge --save file back byte-exact, and a second run writes nothing", async () => {
    const { target, path, select } = await purgedToFile("from-file-trip");
    const first = await runCli(["dlq", "redrive", "--from-file", path, ...select]);
    expect(first.stderr).toBe("");
    expect(first.stdout).toContain(`redrove 3 of 3 from ${path}`);
    expect(first.stdout).toContain("(0 already restored)");
    expect(first.code).toBe(0);
    const copies = await rawEntries(fixture.redis, target);
    expect(copies).toHaveLength(3);
    for (const [index, [, fields]] of copies.entries()) {
      // The original fields byte for byte (a non-UTF-8 value among them), then the metadata.
      expect(fields.slice(0, 8)).toEqual(originalFields(index + 1));
      expect(fieldValue(fields, "x-original-id")).toBe(`1000-${index + 1}`);
      expect(fieldValue(fields, "x-delivery-count")).toBe("0");
      expect(fieldValue(fields, "x-redrive-count")).toBe("1");
      expect(fieldValue(fields, "x-original-group")).toBeUndefined();
    }

    const again = await runCli(["dlq", "redrive", "--from-file", path, ...select, "--json"]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      redriven: 0,
      total: 3,
      alreadyRestored: 3,
      dryRun: false,
    });
    expect(await fixture.redis.xlen(target)).toBe(3);
  });

  it("takes the stream and group from the file; a dry run writes nothing", async () => {
    const { target, path, config } = await purgedToFile("from-file-dry");
    const dry = await runCli(["dlq", "redrive", "--from-file", path, "--dry-run", "-c", config]);
    expect(dry.stdout).toContain(`would redrive 3 of 3 from ${path}`);
    expect(dry.code).toBe(0);
    expect(await fixture.redis.exists(target)).toBe(0);
  });

  it("a line that does not parse is named, and nothing of the file is written", async () => {
    const { target, path, select } = await purgedToFile("from-file-bad");
    const lines = (await readFile(path, "utf8")).trimEnd().split("\n");
    await writeFile(
      path,
      `${lines[0] ?? ""}\n${(lines[1] ?? "").slice(0, 20)}\n${lines[2] ?? ""}\n`,
    );
    const result = await runCli(["dlq", "redrive", "--from-file", path, ...select]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${path} line 2: not JSON`);
    expect(await fixture.redis.exists(target)).toBe(0);
  });

  it("refuses a file of another group's dead letters, naming both", async () => {
    const { stream, path, config } = await purgedToFile("from-file-other");
    const args = ["--stream", stream, "--group", "shipping", "-c", config];
    const result = await runCli(["dlq", "redrive", "--from-file", path, ...args]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `line 1 is a dead letter of ${stream}/billing, not of ${stream}/shipping`,
    );
    expect(await fixture.redis.xlen(stream)).toBe(0);
  });
});
