import { writeFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { DaemonProcess, writeConfigFile, type LogLine } from "../support/daemonProcess.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";

const fixture = useRedisServer();
const running: DaemonProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((daemon) => daemon.kill()));
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function startWith(config: unknown): Promise<{ daemon: DaemonProcess; path: string }> {
  const file = await writeConfigFile(config);
  cleanups.push(file.remove);
  const daemon = await DaemonProcess.start(file.path);
  running.push(daemon);
  return { daemon, path: file.path };
}

async function metricsText(daemon: DaemonProcess): Promise<string> {
  return (await fetch(`${daemon.httpUrl}/metrics`)).text();
}

async function pendingCount(stream: string): Promise<number> {
  const summary = (await fixture.redis.call("XPENDING", stream, "workers")) as [number];
  return summary[0];
}

/** Sends SIGHUP and waits for the outcome line that follows it (the n-th of its kind). */
async function reloadAndWait(daemon: DaemonProcess): Promise<LogLine> {
  const outcomes = (line: LogLine): boolean =>
    line.msg === "configuration reloaded" ||
    String(line.msg).startsWith("configuration reload failed");
  const before = daemon.logs.filter(outcomes).length;
  daemon.signal("SIGHUP");
  await waitFor(() => daemon.logs.filter(outcomes).length > before, {
    what: "the reload to finish",
  });
  return daemon.logs.filter(outcomes)[before] as LogLine;
}

describe("SIGHUP reload", () => {
  it("swaps groups, sweep settings and log level without losing the lease; removed groups leave /metrics", async () => {
    const prefix = uniquePrefix("reload");
    const first = testConfig(fixture.server.url, `${prefix}:a`, [{}], {
      lease: { key: `${prefix}:lease`, ttlMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 },
      sweep: {
        intervalMs: 60_000,
        batchSize: 100,
        maxScriptMs: 2,
        maxEntriesPerGroup: 100_000,
        consumerName: "stream-janitor",
      },
    });
    const { daemon, path } = await startWith(first);
    await waitFor(() => daemon.isLeader(), { what: "the daemon to lead" });
    const token = await daemon.metric("stream_janitor_fencing_token");
    expect(await metricsText(daemon)).toContain(`stream="${prefix}:a:stream"`);

    // Group b exists with stuck entries only after the reload; the new interval is short.
    const second = testConfig(fixture.server.url, `${prefix}:b`, [{}], {
      lease: first.lease,
      sweep: { ...first.sweep, intervalMs: 100 },
      log: { level: "debug" },
    });
    await writeFile(path, JSON.stringify(second));
    const outcome = await reloadAndWait(daemon);
    expect(outcome).toMatchObject({
      msg: "configuration reloaded",
      added: [`${prefix}:b:stream/workers`],
      removed: [`${prefix}:a:stream/workers`],
    });

    // Debug lines now appear: a scrape of the missing stream b says so at debug.
    expect((await metricsText(daemon)).includes(`stream="${prefix}:a:stream"`)).toBe(false);
    await daemon.waitForLog((line) => line.level === 20);

    const stream = `${prefix}:b:stream`;
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(50));
    await waitFor(async () => (await pendingCount(stream)) === 0, {
      what: "group b to be swept on the new 100 ms interval",
    });
    await waitFor(async () => (await metricsText(daemon)).includes(`stream="${stream}"`), {
      what: "group b's series",
    });
    expect(await daemon.isLeader()).toBe(true);
    expect(await daemon.metric("stream_janitor_fencing_token")).toBe(token);
    expect(daemon.logs.some((line) => line.msg === "lease lost")).toBe(false);
    expect(await daemon.metric("stream_janitor_config_last_reload_successful")).toBe(1);
    expect(daemon.child.exitCode).toBeNull();
  });

  it("logs every problem of an invalid file, ignores it, sets the reload gauge to 0, and recovers", async () => {
    const prefix = uniquePrefix("badreload");
    const config = testConfig(fixture.server.url, prefix, [{}]);
    const { daemon, path } = await startWith(config);
    await waitFor(() => daemon.isLeader(), { what: "the daemon to lead" });

    await writeFile(
      path,
      JSON.stringify({
        ...config,
        sweep: { ...config.sweep, intervalMs: -5 },
        redis: { ...config.redis, password: "hunter2", passwordz: "hunter3" },
        groups: [{ ...config.groups[0], action: "explode" }],
      }),
    );
    const failed = await reloadAndWait(daemon);
    expect(failed.msg).toMatch(/^configuration reload failed \(3 problems\)/u);
    expect(failed.level).toBe(50);
    const problems = (failed.problems as string[]).join("\n");
    expect(problems).toContain("sweep.intervalMs");
    expect(problems).toContain("groups[0].action");
    expect(problems).toContain("redis.passwordz");
    expect(JSON.stringify(daemon.logs)).not.toContain("hunter");
    expect(await daemon.metric("stream_janitor_config_last_reload_successful")).toBe(0);

    // The old configuration keeps running: still leader, still sweeping its group.
    const stream = `${prefix}:stream`;
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(20));
    await waitFor(async () => (await pendingCount(stream)) === 0, { what: "the old group swept" });
    expect(await daemon.isLeader()).toBe(true);

    await writeFile(path, JSON.stringify(config));
    expect((await reloadAndWait(daemon)).msg).toBe("configuration reloaded");
    expect(await daemon.metric("stream_janitor_config_last_reload_successful")).toBe(1);
  });

  it("names the settings that need a restart, and keeps running on the old ones", async () => {
    const prefix = uniquePrefix("restartkeys");
    const config = testConfig(fixture.server.url, prefix, [{}]);
    const { daemon, path } = await startWith(config);
    await writeFile(
      path,
      JSON.stringify({
        ...config,
        http: { ...config.http, port: 1 },
        lease: { ...config.lease, ttlMs: 5000 },
        redis: { ...config.redis, password: "s3cret-value" },
      }),
    );
    expect((await reloadAndWait(daemon)).msg).toBe("configuration reloaded");
    const warning = await daemon.waitForLog((line) =>
      String(line.msg).startsWith("configuration reload:"),
    );
    expect(warning.level).toBe(40);
    expect(warning.keys).toEqual(["redis.password", "lease.ttlMs", "http.port"]);
    expect(JSON.stringify(daemon.logs)).not.toContain("s3cret-value");
    // Still served on the old port.
    expect((await fetch(`${daemon.httpUrl}/livez`)).status).toBe(200);
  });

  it("refuses a reload that leaves nothing to do", async () => {
    const prefix = uniquePrefix("emptyreload");
    const config = testConfig(fixture.server.url, prefix, [{}]);
    const { daemon, path } = await startWith(config);
    await writeFile(path, JSON.stringify({ ...config, groups: [] }));
    const failed = await reloadAndWait(daemon);
    expect(failed.msg).toMatch(/^configuration reload failed/u);
    expect(String(failed.problems)).toContain("groups");
    expect(await daemon.metric("stream_janitor_config_last_reload_successful")).toBe(0);
  });
});
