import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { useRedisServer } from "../support/redisServer.js";
import { addDeadLetters } from "./deadLetterFixtures.js";

// The ACL file's example names: this file has a server of its own, so it can use them as they are.
const STREAM = "orders";
const DEAD = "{orders}:dead";
const ACL_FILE = new URL("../../deploy/redis/stream-janitor.acl", import.meta.url);
const PASSWORD = "operator-test-password";

const fixture = useRedisServer();

/** Loads one user's rules from the ACL file, as written, plus a password. */
async function loadUser(name: string, as = name, edit = (line: string) => line): Promise<void> {
  const text = await readFile(ACL_FILE, "utf8");
  const line = text.split("\n").find((l) => l.startsWith(`user ${name} `));
  if (line === undefined) throw new Error(`no user ${name} in ${ACL_FILE.pathname}`);
  const rules = edit(line).split(/\s+/u).slice(2);
  await fixture.redis.call("ACL", "SETUSER", as, ...rules, `>${PASSWORD}`);
}

// Every command needs a configuration file; the user comes from the environment.
let configFile: Awaited<ReturnType<typeof writeConfigFile>> | undefined;
afterAll(() => configFile?.remove());

async function as(user: string, args: string[]) {
  configFile ??= await writeConfigFile({});
  const [host, port] = [`127.0.0.1`, fixture.server.port];
  return runCli([...args, "--config", configFile.path], {
    STREAM_JANITOR_REDIS_URL: `redis://${user}:${PASSWORD}@${host}:${port}`,
  });
}

const pair = ["--stream", STREAM, "--group", "billing"];

describe("operator commands under the ACL users of deploy/redis/stream-janitor.acl", () => {
  beforeAll(async () => {
    await loadUser("stream-janitor-operator");
    await loadUser("stream-janitor-operator-rw");
    await addStuckEntries(fixture.redis, STREAM, "billing", numberedBodies(5), { consumer: "w" });
    await fixture.redis.xgroup("CREATECONSUMER", STREAM, "billing", "idle-worker");
    await addDeadLetters(fixture.redis, {
      stream: STREAM,
      group: "billing",
      deadLetterStream: DEAD,
      count: 4,
    });
  });

  it("inspect and dlq list work read-only; writes are refused to that user", async () => {
    const inspect = await as("stream-janitor-operator", ["inspect", "--json"]);
    expect(inspect.stderr).toBe("");
    expect(inspect.code).toBe(0);
    const list = await as("stream-janitor-operator", ["dlq", "list", ...pair, "--json"]);
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as { deadLetters: unknown[] }).deadLetters).toHaveLength(4);

    const redrive = await as("stream-janitor-operator", ["dlq", "redrive", ...pair]);
    expect(redrive.code).toBe(1);
    expect(redrive.stderr).toMatch(/NOPERM/u);
    expect(await fixture.redis.xlen(DEAD)).toBe(4);
  });

  it("the operator-rw user runs every command", async () => {
    const user = "stream-janitor-operator-rw";
    expect((await as(user, ["inspect"])).code).toBe(0);
    expect((await as(user, ["dlq", "list", ...pair])).code).toBe(0);
    const redrive = await as(user, ["dlq", "redrive", ...pair, "--limit", "2", "--json"]);
    expect(redrive.stderr).toBe("");
    expect(JSON.parse(redrive.stdout)).toEqual({ redriven: 2, remaining: 2, dryRun: false });
    // With no selector a purge is refused (exit 2): --all says "every dead letter of the group".
    const purge = await as(user, ["dlq", "purge", ...pair, "--all", "--json"]);
    expect(JSON.parse(purge.stdout)).toEqual({ purged: 2, remaining: 0, dryRun: false });
    const reap = await as(user, ["consumers", "reap", ...pair, "--idle-ms", "0", "--json"]);
    expect(JSON.parse(reap.stdout)).toMatchObject({ reaped: ["idle-worker"], keptWithPending: 1 });
    const trim = await as(user, ["trim", "--stream", STREAM, "--max-len", "0", "--json"]);
    expect(trim.stderr).toBe("");
    expect(JSON.parse(trim.stdout)).toMatchObject({
      removed: 0,
      blockedBy: [{ group: "billing" }],
    });
  });
  it("the operator-rw user writes its advisory events: XADD on the events stream, nothing more", async () => {
    const user = "stream-janitor-operator-rw";
    const events = "stream-janitor:events";
    await fixture.redis.xgroup("CREATECONSUMER", STREAM, "billing", "idle-worker-2");
    const reap = await as(user, ["consumers", "reap", ...pair, "--idle-ms", "0"]);
    expect(reap.stderr).toBe("");
    const [[, fields] = ["", []]] = await fixture.redis.xrevrange(events, "+", "-", "COUNT", 1);
    expect(fields.slice(0, 2)).toEqual(["type", "consumers-reaped"]);
    const dryRun = async (...command: string[]) =>
      String(await fixture.redis.call("ACL", "DRYRUN", user, ...command));
    expect(await dryRun("XADD", events, "*", "type", "x")).toBe("OK");
    expect(await dryRun("XDEL", events, "1-1")).not.toBe("OK");
    expect(await dryRun("XTRIM", events, "MAXLEN", "0")).not.toBe("OK");
    expect(await dryRun("XGROUP", "DELCONSUMER", events, "g", "c")).not.toBe("OK");
  });

  it("a user that may not write the events stream (an older ACL file) does the work, warns once, exits 0", async () => {
    const user = "operator-without-events";
    await loadUser("stream-janitor-operator-rw", user, (line) =>
      line.replace(" (~stream-janitor:events +xadd)", ""),
    );
    await addDeadLetters(fixture.redis, {
      stream: STREAM,
      group: "billing",
      deadLetterStream: DEAD,
      count: 2,
      firstOriginal: 50,
    });
    const purge = await as(user, ["dlq", "purge", ...pair, "--all", "--json"]);
    expect(purge.code).toBe(0);
    expect(JSON.parse(purge.stdout)).toMatchObject({ purged: 2 });
    const warnings = purge.stderr.trim().split("\n");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/warning: the dlq-purged event was not written .*NOPERM/u);
    expect(await fixture.redis.xlen(DEAD)).toBe(0);
  });

  it("the operator-rw user brings a dlq purge --save file back with dlq redrive --from-file", async () => {
    const user = "stream-janitor-operator-rw";
    await addDeadLetters(fixture.redis, {
      stream: STREAM,
      group: "billing",
      deadLetterStream: DEAD,
      count: 2,
      firstOriginal: 70,
    });
    const dir = await mkdtemp(join(tmpdir(), "sj-acl-save-"));
    try {
      const path = join(dir, "purged.jsonl");
      const purge = await as(user, ["dlq", "purge", ...pair, "--all", "--save", path]);
      expect(purge.code).toBe(0);
      const before = await fixture.redis.xlen(STREAM);
      const redrive = await as(user, ["dlq", "redrive", "--from-file", path]);
      expect(redrive.stderr).toBe("");
      expect(redrive.stdout).toContain("redrove 2 of 2");
      expect(redrive.code).toBe(0);
      expect(await fixture.redis.xlen(STREAM)).toBe(before + 2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
