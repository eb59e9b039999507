import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { redriveTaskDirectoryKey, redriveTaskKeys } from "../../src/core/redriveTask.js";
import type { LeaderTerm } from "../../src/lease/types.js";
import { RedriveTaskRunner } from "../../src/maintenance/RedriveTaskRunner.js";
import { createRedriveTaskMetrics } from "../../src/metrics/redriveTaskMetrics.js";
import {
  cancelRedriveTask,
  startRedriveTask,
  TaskActiveError,
  type StartTaskOptions,
} from "../../src/operations/redriveTasks.js";
import { readRedriveTasks } from "../../src/reads/readRedriveTasks.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { runRedriveTaskBatch } from "../../src/scripts/redriveTaskBatch.js";
import type { AdvisoryEvent } from "../../src/events/EventWriter.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { captureLogger, groupConfig } from "../support/sweepHarness.js";
import { addDeadLetters, fieldValue, rawEntries } from "./deadLetterFixtures.js";

const fixture = useRedisServer();

/** A source stream with `count` dead letters of its group `workers`, and the test's lease key. */
async function setup(name: string, count: number) {
  const prefix = uniquePrefix(name);
  const stream = `${prefix}:orders`;
  const group = groupConfig(stream);
  await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
  const letters = await addDeadLetters(fixture.redis, {
    stream,
    group: "workers",
    deadLetterStream: group.deadLetterStream,
    count,
  });
  const leaseKey = `${prefix}:lease`;
  const options: StartTaskOptions = {
    leaseKey,
    reason: undefined,
    limit: Number.POSITIVE_INFINITY,
    to: undefined,
    rate: 0,
    startedBy: "alice",
    keepMs: 3_600_000,
  };
  return { stream, group, letters, leaseKey, options, redis: registerScripts(fixture.redis) };
}

/** The lease held with `value`, as a term of the leader that holds it. */
async function term(leaseKey: string, value: string): Promise<LeaderTerm> {
  await fixture.redis.set(leaseKey, value);
  return { signal: new AbortController().signal, fence: { key: leaseKey, value }, fencingToken: 1 };
}

/** A runner on a clock the test moves (`clock.ms`): a rated task runs one batch per round. */
function runner(leaseKey: string, leader: () => LeaderTerm | undefined, batchSize = 500) {
  const clock = { ms: 0 };
  const registry = new Registry();
  const metrics = createRedriveTaskMetrics(registry);
  const events: AdvisoryEvent[] = [];
  const { logger, lines } = captureLogger();
  const tasks = new RedriveTaskRunner({
    redis: registerScripts(fixture.redis),
    leaseKey,
    budgetMs: 2,
    currentTerm: leader,
    logger,
    metrics,
    events: { write: (event) => events.push(event) },
    batchSize,
    now: () => clock.ms,
  });
  return { tasks, clock, registry, events, lines };
}

/** The x-original-id of every entry of `stream`, in order. */
async function originalIds(stream: string): Promise<string[]> {
  return (await rawEntries(fixture.redis, stream)).map(
    ([, fields]) => fieldValue(fields, "x-original-id") ?? "",
  );
}

async function metric(registry: Registry, name: string, labels = ""): Promise<number> {
  const text = await registry.metrics();
  const line = text.split("\n").find((l) => l.startsWith(`${name}${labels} `));
  return Number(line?.split(" ")[1] ?? Number.NaN);
}

describe("redrive tasks (dlq redrive --async)", () => {
  it("runs to COMPLETED under the leader: every dead letter moved once, bytes and order kept, counts, event, metrics, kept for keepMs", async () => {
    const { stream, group, letters, leaseKey, options, redis } = await setup("task-life", 1200);
    const task = await startRedriveTask(redis, group, options);
    expect(task).toMatchObject({ status: "RUNNING", moved: 0, toMove: 1200, startedBy: "alice" });
    const leader = await term(leaseKey, "me");
    const { tasks, registry, events } = runner(leaseKey, () => leader);
    const seen = await tasks.runOnce();
    expect(seen.map((t) => [t.id, t.status])).toEqual([[task.id, "COMPLETED"]]);

    const [listed] = (await readRedriveTasks(redis, redriveTaskDirectoryKey(leaseKey))).tasks;
    expect(listed).toMatchObject({ id: task.id, status: "COMPLETED", moved: 1200, toMove: 1200 });
    expect(listed?.finishedAt).toBeGreaterThan(0);
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(0);
    expect(await originalIds(stream)).toEqual(letters.map((l) => l.originalId));
    const copies = await rawEntries(fixture.redis, stream);
    copies.forEach(([, fields], i) => {
      // The original fields, byte for byte, come first; the copy's metadata after them.
      expect(fields.slice(0, 8)).toEqual(letters[i]?.fields);
    });
    const ttl = await fixture.redis.pttl(redriveTaskKeys(group.deadLetterStream, task.id).task);
    expect(ttl).toBeGreaterThan(3_500_000);
    expect(ttl).toBeLessThanOrEqual(3_600_000);
    expect(
      await fixture.redis.exists(redriveTaskKeys(group.deadLetterStream, task.id).active),
    ).toBe(0);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: "task-finished",
      stream,
      group: "workers",
      count: 1200,
      detail: { id: task.id, status: "COMPLETED", startedBy: "alice", moved: 1200 },
    });
    expect(await metric(registry, "stream_janitor_redrive_task_moved_entries_total")).toBe(1200);
    expect(await metric(registry, "stream_janitor_redrive_tasks", '{status="COMPLETED"}')).toBe(1);
    expect(await metric(registry, "stream_janitor_redrive_tasks", '{status="RUNNING"}')).toBe(0);
  });

  it("allows one active task per dead-letter stream: a second start is refused naming the first", async () => {
    const { group, leaseKey, options, redis } = await setup("task-one", 10);
    const first = await startRedriveTask(redis, group, options);
    const refused = startRedriveTask(redis, group, { ...options, startedBy: "bob" });
    await expect(refused).rejects.toBeInstanceOf(TaskActiveError);
    await expect(refused).rejects.toThrow(first.id);
    const { tasks } = await readRedriveTasks(redis, redriveTaskDirectoryKey(leaseKey));
    expect(tasks.map((t) => t.id)).toEqual([first.id]);
    expect(await fixture.redis.zcard(redriveTaskDirectoryKey(leaseKey))).toBe(1);
  });

  it("cancel: RUNNING -> CANCELLING -> CANCELLED at the next batch; what moved stays moved, the rest stays put, a new task may start", async () => {
    const { stream, group, leaseKey, options, redis } = await setup("task-cancel", 300);
    const task = await startRedriveTask(redis, group, { ...options, rate: 1000 });
    const leader = await term(leaseKey, "me");
    const { tasks, events } = runner(leaseKey, () => leader, 50);
    await tasks.runOnce(); // one batch of 50, then the next waits 50 ms at 1000/s
    expect(await fixture.redis.xlen(stream)).toBe(50);
    expect(await cancelRedriveTask(redis, leaseKey, task.id)).toMatchObject({
      before: "RUNNING",
      after: "CANCELLING",
    });
    expect(await cancelRedriveTask(redis, leaseKey, task.id)).toMatchObject({
      before: "CANCELLING",
      after: "CANCELLING",
    });
    await tasks.runOnce(); // the clock has not moved: nothing runs before its time
    const runs = (await readRedriveTasks(redis, redriveTaskDirectoryKey(leaseKey))).tasks;
    expect(runs[0]?.status).toBe("CANCELLING");
    const later = runner(leaseKey, () => leader, 50);
    await later.tasks.runOnce();
    const [cancelled] = (await readRedriveTasks(redis, redriveTaskDirectoryKey(leaseKey))).tasks;
    expect(cancelled).toMatchObject({ status: "CANCELLED", moved: 50, toMove: 300 });
    expect(await fixture.redis.xlen(stream)).toBe(50);
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(250);
    expect(later.events.map((e) => e.detail?.status)).toEqual(["CANCELLED"]);
    expect(events).toEqual([]);
    await expect(startRedriveTask(redis, group, options)).resolves.toMatchObject({ toMove: 250 });
  });

  it("a new leader resumes a task the old one ran part of: nothing lost or doubled, counts exact; the stale leader's batch is refused", async () => {
    const { stream, group, letters, leaseKey, options, redis } = await setup("task-leader", 1000);
    const task = await startRedriveTask(redis, group, { ...options, rate: 2000 });
    const old = await term(leaseKey, "old");
    const first = runner(leaseKey, () => old, 50);
    await first.tasks.runOnce(); // one batch of 50
    await first.tasks.stop();
    expect(await fixture.redis.xlen(stream)).toBe(50);

    const next = await term(leaseKey, "new"); // the lease moved: "old" is stale now
    first.clock.ms += 1000;
    await first.tasks.runOnce();
    expect(await fixture.redis.xlen(stream)).toBe(50);
    expect(first.lines.some((l) => String(l.msg).includes("held by another process"))).toBe(true);

    const second = runner(leaseKey, () => next);
    for (let round = 0; round < 40; round += 1) {
      await second.tasks.runOnce();
      second.clock.ms += 1000;
    }
    const [done] = (await readRedriveTasks(redis, redriveTaskDirectoryKey(leaseKey))).tasks;
    expect(done).toMatchObject({ id: task.id, status: "COMPLETED", moved: 1000, toMove: 1000 });
    expect(await originalIds(stream)).toEqual(letters.map((l) => l.originalId));
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(0);
    expect(await metric(second.registry, "stream_janitor_redrive_task_moved_entries_total")).toBe(
      950,
    );
  });

  it("a batch repeated after a crash (its reply lost) goes on from the task's cursor: nothing moved twice", async () => {
    const { stream, group, letters, leaseKey, options, redis } = await setup("task-crash", 250);
    const task = await startRedriveTask(redis, group, options);
    const { fence } = await term(leaseKey, "me");
    const batch = { task, fence, scanLimit: 100, moveLimit: 100 };
    await runRedriveTaskBatch(redis, batch); // the reply is "lost": the caller sends it again
    const again = await runRedriveTaskBatch(redis, batch);
    expect(again).toMatchObject({ status: "RUNNING", movedNow: 100, moved: 200 });
    const last = await runRedriveTaskBatch(redis, batch);
    expect(last).toMatchObject({ status: "COMPLETED", movedNow: 50, moved: 250 });
    const after = await runRedriveTaskBatch(redis, batch);
    expect(after).toMatchObject({ status: "COMPLETED", movedNow: 0, moved: 250 });
    expect(await originalIds(stream)).toEqual(letters.map((l) => l.originalId));
  });

  it("a stale fence changes nothing: FENCED, task and dead letters untouched", async () => {
    const { stream, group, leaseKey, options, redis } = await setup("task-fenced", 20);
    const task = await startRedriveTask(redis, group, options);
    await term(leaseKey, "current");
    const stale = { key: leaseKey, value: "stale" };
    await expect(
      runRedriveTaskBatch(redis, { task, fence: stale, scanLimit: 100, moveLimit: 100 }),
    ).rejects.toThrow(/^FENCED/u);
    const key = redriveTaskKeys(group.deadLetterStream, task.id).task;
    expect(await fixture.redis.hget(key, "moved")).toBe("0");
    expect(await fixture.redis.hget(key, "cursor")).toBe("0-0");
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(20);
    expect(await fixture.redis.exists(stream)).toBe(1);
    expect(await fixture.redis.xlen(stream)).toBe(0);
  });

  it("FAILED with the reason when the target turns into another type; the dead letters not moved stay", async () => {
    const { stream, group, leaseKey, options, redis } = await setup("task-failed", 300);
    const task = await startRedriveTask(redis, group, { ...options, rate: 1000 });
    const leader = await term(leaseKey, "me");
    const { tasks, clock, events } = runner(leaseKey, () => leader, 50);
    await tasks.runOnce();
    await fixture.redis.del(stream);
    await fixture.redis.set(stream, "not a stream");
    clock.ms += 1000;
    await tasks.runOnce();
    const [failed] = (await readRedriveTasks(redis, redriveTaskDirectoryKey(leaseKey))).tasks;
    expect(failed).toMatchObject({ id: task.id, status: "FAILED", moved: 50 });
    expect(failed?.failure).toMatch(/^WRONGTYPE .* holds a string, not a stream/u);
    expect(await fixture.redis.xlen(group.deadLetterStream)).toBe(250);
    expect(
      await fixture.redis.exists(redriveTaskKeys(group.deadLetterStream, task.id).active),
    ).toBe(0);
    expect(events.map((e) => [e.type, e.detail?.status])).toEqual([["task-finished", "FAILED"]]);
  });

  it("a standby runs nothing", async () => {
    const { stream, group, leaseKey, options, redis } = await setup("task-standby", 5);
    await startRedriveTask(redis, group, options);
    const { tasks } = runner(leaseKey, () => undefined);
    expect(await tasks.runOnce()).toEqual([]);
    expect(await fixture.redis.xlen(stream)).toBe(0);
  });
});
