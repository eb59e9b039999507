import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACL_FILE } from "../support/aclFile.js";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import { useRedisServer } from "../support/redisServer.js";
import { addDeadLetters } from "./deadLetterFixtures.js";

/**
 * Redrive tasks under the operator users of deploy/redis/stream-janitor.acl (README "ACL user"):
 * the read-write user starts, lists and cancels a task; the read-only one lists it and is refused
 * the rest, changing nothing. The file's example names are used as they are (a server of its own).
 */
const fixture = useRedisServer();
const PASSWORD = "task-acl-password";
const pair = ["--stream", "orders", "--group", "billing"];
let configFile: Awaited<ReturnType<typeof writeConfigFile>> | undefined;
afterAll(() => configFile?.remove());

async function loadUser(name: string): Promise<void> {
  const line = (await readFile(ACL_FILE, "utf8"))
    .split("\n")
    .find((l) => l.startsWith(`user ${name} `));
  if (line === undefined) throw new Error(`no user ${name} in ${ACL_FILE}`);
  await fixture.redis.call("ACL", "SETUSER", name, ...line.split(/\s+/u).slice(2), `>${PASSWORD}`);
}

async function as(user: string, args: string[]) {
  configFile ??= await writeConfigFile({});
  return runCli([...args, "--config", configFile.path], {
    STREAM_JANITOR_REDIS_URL: `redis://${user}:${PASSWORD}@127.0.0.1:${fixture.server.port}`,
  });
}

async function listed(user: string): Promise<{ id: string; status: string; startedBy: string }[]> {
  const list = await as(user, ["dlq", "tasks", "--json"]);
  expect(list.stderr).toBe("");
  expect(list.code).toBe(0);
  return (JSON.parse(list.stdout) as { tasks: { id: string; status: string; startedBy: string }[] })
    .tasks;
}

describe("redrive tasks under the operator ACL users", () => {
  beforeAll(async () => {
    await loadUser("stream-janitor-operator");
    await loadUser("stream-janitor-operator-rw");
    await fixture.redis.xgroup("CREATE", "orders", "billing", "$", "MKSTREAM");
    await addDeadLetters(fixture.redis, {
      stream: "orders",
      group: "billing",
      deadLetterStream: "{orders}:dead",
      count: 4,
    });
  });

  it("operator-rw starts, lists and cancels a task; the read-only operator lists it and may neither start nor cancel one", async () => {
    const rw = "stream-janitor-operator-rw";
    const ro = "stream-janitor-operator";
    const refusedStart = await as(ro, ["dlq", "redrive", "--async", ...pair]);
    expect(refusedStart.stderr).toMatch(/NOPERM/u);
    expect(refusedStart.code).toBe(1);

    const started = await as(rw, ["dlq", "redrive", "--async", ...pair, "--by", "carol"]);
    expect(started.stderr).toContain("started by carol: 4 dead letter(s)");
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    expect(await listed(ro)).toEqual([
      expect.objectContaining({ id, status: "RUNNING", startedBy: "carol" }),
    ]);
    expect(await listed(rw)).toEqual([expect.objectContaining({ id, status: "RUNNING" })]);

    const refusedCancel = await as(ro, ["dlq", "cancel", id]);
    expect(refusedCancel.stderr).toMatch(/NOPERM/u);
    expect(refusedCancel.code).toBe(1);
    expect(await listed(ro)).toEqual([expect.objectContaining({ id, status: "RUNNING" })]);

    const cancelled = await as(rw, ["dlq", "cancel", id]);
    expect(cancelled.stdout).toContain(`${id}: CANCELLING`);
    expect(cancelled.code).toBe(0);
    expect(await listed(ro)).toEqual([expect.objectContaining({ id, status: "CANCELLING" })]);
    expect(await fixture.redis.xlen("{orders}:dead")).toBe(4);
  }, 600_000); // Nine CLI processes, each a Node start: minutes on a loaded machine.
});
