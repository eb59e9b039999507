import { afterEach, describe, expect, it } from "vitest";
import { DaemonProcess, runCli, writeConfigFile } from "../support/daemonProcess.js";
import { expectExactlyOnce } from "../support/expectExactlyOnce.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { startRedis, uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";

const fixture = useRedisServer();
const running: DaemonProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((daemon) => daemon.kill()));
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function configFile(config: unknown): Promise<string> {
  const file = await writeConfigFile(config);
  cleanups.push(file.remove);
  return file.path;
}

async function start(path: string): Promise<DaemonProcess> {
  const daemon = await DaemonProcess.start(path);
  running.push(daemon);
  return daemon;
}

async function pendingCount(stream: string): Promise<number> {
  const summary = (await fixture.redis.call("XPENDING", stream, "workers")) as [number];
  return summary[0];
}

describe("a leader that freezes", () => {
  it("cannot change anything after its lease moved: the standby sweeps, nothing is lost or duplicated", async () => {
    const prefix = uniquePrefix("frozen");
    const stream = `${prefix}:stream`;
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(30_000));
    const sweepIn = (batchSize: number, maxScriptMs: number) =>
      configFile(
        testConfig(fixture.server.url, prefix, [{ minIdleMs: 60_000 }], {
          sweep: {
            intervalMs: 100,
            batchSize,
            maxScriptMs,
            maxEntriesPerGroup: 1_000_000,
            consumerName: "stream-janitor",
          },
        }),
      );
    // Small pages and a short interval make the freeze land in the middle of a sweep: at least
    // 1,500 script calls, however fast the machine. The standby (same lease, same group) drains
    // in large pages: in 20-entry pages its drain alone took 6.8 s at load 12 (1.5 s so), and the
    // whole test ran out of its minute at load 17.
    const path = await sweepIn(20, 2);
    const standbyPath = await sweepIn(1000, 50);
    const first = await start(path);
    await waitFor(() => first.isLeader(), { what: "the first daemon to lead" });
    await waitFor(async () => (await pendingCount(stream)) < 29_000, {
      what: "the sweep to start",
    });
    first.signal("SIGSTOP");
    const frozenAt = await pendingCount(stream);
    expect(frozenAt).toBeGreaterThan(0);

    const second = await start(standbyPath);
    await waitFor(() => second.isLeader(), { timeoutMs: 10_000, what: "the standby to take over" });
    first.signal("SIGCONT");
    const resumedAt = performance.now();
    await waitFor(async () => (await pendingCount(stream)) === 0, {
      timeoutMs: 60_000,
      what: "the PEL to drain",
    });
    console.log(
      `frozen at ${frozenAt} pending; drained ${(performance.now() - resumedAt).toFixed(0)} ms after the resume`,
    );
    // The resumed leader's deadline timer has long passed: it must know it lost the lease.
    await first.waitForLog((line) => line.msg === "lease lost");

    await expect(
      expectExactlyOnce(fixture.redis, {
        stream,
        group: "workers",
        deadLetterStream: `{${stream}}:dead`,
        originalIds: ids,
      }),
    ).resolves.toMatchObject({ requeued: 30_000 });
    expect(await second.isLeader()).toBe(true);
    expect(await first.isLeader()).toBe(false);
    // Its waits have deadlines of their own; this one only keeps them from being cut short.
  }, 120_000);
});

describe("graceful stop", () => {
  it("stops promptly on SIGTERM during a 50,000-entry sweep, releases the lease, loses nothing", async () => {
    const prefix = uniquePrefix("term");
    const stream = `${prefix}:stream`;
    const ids = await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(50_000));
    const path = await configFile(
      testConfig(fixture.server.url, prefix, [{ minIdleMs: 60_000 }], {
        sweep: {
          intervalMs: 100,
          batchSize: 10,
          maxScriptMs: 2,
          maxEntriesPerGroup: 1_000_000,
          consumerName: "stream-janitor",
        },
      }),
    );
    const daemon = await start(path);
    await waitFor(async () => (await pendingCount(stream)) < 49_000, {
      what: "the sweep to start",
    });
    const stoppedAt = performance.now();
    daemon.signal("SIGTERM");
    const exit = await daemon.exited;
    const stopMs = performance.now() - stoppedAt;
    console.log(`SIGTERM mid-sweep: exited in ${stopMs.toFixed(0)} ms`);

    expect(exit.code).toBe(0);
    expect(stopMs).toBeLessThan(5_000);
    expect(await fixture.redis.get(`${prefix}:lease`)).toBeNull();
    const outcome = await expectExactlyOnce(fixture.redis, {
      stream,
      group: "workers",
      deadLetterStream: `{${stream}}:dead`,
      originalIds: ids,
    });
    expect(outcome.stillPending).toBeGreaterThan(0);
    expect(outcome.requeued).toBeGreaterThan(0);
  });
});

describe("redis outage", () => {
  it("survives redis-server being killed and restarted: not ready while down, sweeps again after", async () => {
    const local = await startRedis();
    cleanups.push(() => local.stop());
    const localRedis = local.client();
    const prefix = uniquePrefix("outage");
    const stream = `${prefix}:stream`;
    const daemon = await start(await configFile(testConfig(local.url, prefix, [{ minIdleMs: 1 }])));
    await waitFor(() => daemon.isLeader(), { what: "leadership" });
    expect((await fetch(`${daemon.httpUrl}/readyz`)).status).toBe(200);

    await local.kill();
    await waitFor(async () => (await fetch(`${daemon.httpUrl}/readyz`)).status === 503, {
      what: "not ready",
    });
    expect((await fetch(`${daemon.httpUrl}/livez`)).status).toBe(200);
    await waitFor(async () => (await daemon.metric("stream_janitor_leader")) === 0, {
      what: "lease given up",
    });
    expect(await daemon.metric("stream_janitor_redis_up")).toBe(0);

    await local.restart();
    await waitFor(async () => (await fetch(`${daemon.httpUrl}/readyz`)).status === 200, {
      timeoutMs: 15_000,
      what: "ready again",
    });
    const ids = await addStuckEntries(localRedis, stream, "workers", numberedBodies(20));
    await waitFor(async () => (await localRedis.xlen(stream)) === 40, {
      timeoutMs: 15_000,
      what: "requeued copies",
    });
    await expect(
      expectExactlyOnce(localRedis, {
        stream,
        group: "workers",
        deadLetterStream: `{${stream}}:dead`,
        originalIds: ids,
      }),
    ).resolves.toMatchObject({ requeued: 20 });
    expect(daemon.child.exitCode).toBeNull();
  });
});

describe("the one-shot sweep command", () => {
  it("exits 75 while a daemon holds the lease", async () => {
    const prefix = uniquePrefix("held");
    const path = await configFile(testConfig(fixture.server.url, prefix, [{}]));
    const daemon = await start(path);
    await waitFor(() => daemon.isLeader(), { what: "leadership" });
    const result = await runCli(["sweep", "--config", path, "--json"]);
    expect(result.code).toBe(75);
    expect(result.stderr).toContain("held by another process");
    expect(result.stdout).toBe("");
  });
});
