import { afterEach, describe, expect, it } from "vitest";
import { DaemonProcess, runCli, writeConfigFile } from "../support/daemonProcess.js";
import { eventsIn } from "../support/eventsIn.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";
import { addDeadLetters, fieldValue, rawEntries } from "../operator/deadLetterFixtures.js";

const fixture = useRedisServer();
const running: DaemonProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((daemon) => daemon.kill()));
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

/** The configured group `${prefix}:stream`/workers with `count` dead letters; the config file. */
async function setup(name: string, count: number) {
  const prefix = uniquePrefix(name);
  const config = testConfig(fixture.server.url, prefix, [{}]);
  const file = await writeConfigFile(config);
  cleanups.push(file.remove);
  const stream = `${prefix}:stream`;
  await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
  const dead = groupConfig(stream).deadLetterStream;
  const letters = await addDeadLetters(fixture.redis, {
    stream,
    group: "workers",
    deadLetterStream: dead,
    count,
  });
  const pair = ["--stream", stream, "--group", "workers", "--config", file.path];
  return { stream, dead, letters, pair, path: file.path, events: config.events.stream };
}

interface ListedTask {
  id: string;
  status: string;
  moved: number;
  toMove: number;
  startedBy: string;
  failure: string;
}

async function listTasks(path: string): Promise<ListedTask[]> {
  const listed = await runCli(["dlq", "tasks", "--json", "--config", path]);
  expect(listed.code).toBe(0);
  return (JSON.parse(listed.stdout) as { tasks: ListedTask[] }).tasks;
}

async function taskWhen(
  path: string,
  id: string,
  holds: (task: ListedTask) => boolean,
  what: string,
): Promise<ListedTask> {
  return waitFor(
    async () => (await listTasks(path)).find((task) => task.id === id && holds(task)),
    { timeoutMs: 60_000, intervalMs: 100, what },
  );
}

describe("redrive tasks run by the daemon", () => {
  it("survives kill -9 of the leader mid-task: the next leader finishes it, every dead letter moved exactly once", async () => {
    const { stream, dead, letters, pair, path, events } = await setup("task-kill", 3000);
    const daemons = await Promise.all([DaemonProcess.start(path), DaemonProcess.start(path)]);
    running.push(...daemons);
    const started = await runCli([
      "dlq",
      "redrive",
      "--async",
      ...pair,
      "--rate",
      "400",
      "--by",
      "carol",
    ]);
    expect(started.stderr).toContain("started by carol");
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    expect(id).toMatch(/^rt-[0-9a-z]+-[0-9a-f]{6}$/u);

    await taskWhen(path, id, (task) => task.moved >= 400, "a task part done");
    const leader = await waitFor(async () => {
      const flags = await Promise.all(daemons.map((d) => d.isLeader()));
      return daemons[flags.indexOf(true)];
    });
    await leader.kill();
    const partly = (await listTasks(path)).find((task) => task.id === id);
    expect(partly?.status).toBe("RUNNING");
    expect(partly?.moved).toBeLessThan(3000);

    const done = await taskWhen(path, id, (task) => task.status !== "RUNNING", "the task ended");
    expect(done).toMatchObject({
      status: "COMPLETED",
      moved: 3000,
      toMove: 3000,
      startedBy: "carol",
    });
    const copies = await rawEntries(fixture.redis, stream);
    expect(copies.map(([, fields]) => fieldValue(fields, "x-original-id"))).toEqual(
      letters.map((letter) => letter.originalId),
    );
    expect(await fixture.redis.xlen(dead)).toBe(0);
    const written = await eventsIn(fixture.redis, events);
    const types = written
      .map((event) => event.type)
      .filter((type) => type?.startsWith("task-") === true);
    expect(types).toEqual(["task-started", "task-finished"]);
    expect(written.find((e) => e.type === "task-started")?.by).toMatch(/^operator@/u);
  });

  it("dlq cancel stops a running task at its next batch; a second start meanwhile is refused naming the active task", async () => {
    const { stream, dead, pair, path } = await setup("task-cancel-cli", 2000);
    running.push(await DaemonProcess.start(path));
    const started = await runCli(["dlq", "redrive", "--async", ...pair, "--rate", "100"]);
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    const second = await runCli(["dlq", "redrive", "--async", ...pair]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`already has an active redrive task, ${id}`);

    await taskWhen(path, id, (task) => task.moved > 0, "a first batch");
    const cancel = await runCli(["dlq", "cancel", id, "--config", path]);
    expect(cancel.stdout).toContain("CANCELLING");
    expect(cancel.code).toBe(0);
    const ended = await taskWhen(path, id, (task) => task.status === "CANCELLED", "CANCELLED");
    expect(ended.moved).toBeLessThan(2000);
    expect(await fixture.redis.xlen(stream)).toBe(ended.moved);
    expect(await fixture.redis.xlen(dead)).toBe(2000 - ended.moved);
    const unknown = await runCli(["dlq", "cancel", "rt-nope-000000", "--config", path]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("no redrive task rt-nope-000000");
    const table = await runCli(["dlq", "tasks", "--config", path]);
    expect(table.stdout).toMatch(new RegExp(`${id}\\s+CANCELLED`, "u"));
  });
});
