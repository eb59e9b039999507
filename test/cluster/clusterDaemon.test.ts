import type { Cluster } from "ioredis";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { keySlot } from "../../src/core/keySlot.js";
import { slotFenceKey } from "../../src/core/fence.js";
import { DaemonProcess, runCli } from "../support/daemonProcess.js";
import { expectExactlyOnce } from "../support/expectExactlyOnce.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { useRedisCluster } from "../support/redisCluster.js";
import { uniquePrefix } from "../support/redisServer.js";
import { clusterTestConfig } from "../support/clusterTestConfig.js";
import { waitFor } from "../support/waitFor.js";
import { useConfigFiles } from "../support/useConfigFiles.js";

const running: DaemonProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((daemon) => daemon.kill()));
});

const configPath = useConfigFiles();

async function start(path: string): Promise<DaemonProcess> {
  const daemon = await DaemonProcess.start(path);
  running.push(daemon);
  return daemon;
}

async function pendingTotal(redis: Cluster, streams: readonly string[]): Promise<number> {
  let total = 0;
  for (const stream of streams)
    total += ((await redis.call("XPENDING", stream, "workers")) as [number])[0];
  return total;
}

/** Every gauge sample of `name` by its stream label. */
async function samplesByStream(daemon: DaemonProcess, name: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${daemon.httpUrl}/metrics`)).text();
  const samples = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const stream = /stream="([^"]*)"/u.exec(line)?.[1];
    if (stream !== undefined) samples.set(stream, Number(line.slice(line.lastIndexOf(" ") + 1)));
  }
  return samples;
}

describe("the daemon on Redis Cluster (three masters)", () => {
  const fixture = useRedisCluster();
  let redis: Cluster;
  beforeAll(() => {
    redis = fixture.cluster.client();
  });

  it("refuses, with exit 78, a group whose keys would span two hash slots", async () => {
    const stream = uniquePrefix("orders");
    const path = await configPath(
      clusterTestConfig(fixture.cluster, stream, [{ stream, requeueStream: `${stream}:retry` }]),
    );
    // The same configuration is fine on one server, where every key is reachable from a script.
    const standalone = clusterTestConfig(fixture.cluster, stream, [
      { stream, requeueStream: `${stream}:retry` },
    ]);
    standalone.redis = { ...standalone.redis, mode: "standalone", nodes: [] };
    const [result, onOneServer] = await Promise.all([
      runCli(["run", "--config", path]),
      // --offline: the slot rule is a rule of the file; this node is not a standalone server.
      configPath(standalone).then((file) =>
        runCli(["check-config", "--offline", "--config", file]),
      ),
    ]);
    expect(result.code).toBe(78);
    expect(result.stderr).toContain(`groups[0].requeueStream = "${stream}:retry"`);
    expect(result.stderr).toContain(`(slot ${keySlot(stream)})`);
    expect(result.stderr).toContain(`slot ${keySlot(`${stream}:retry`)}`);
    expect(result.stderr).toContain(`"{${stream}}:retry"`);
    expect(onOneServer.code).toBe(0);
  });

  it("one leader; a frozen leader writes nothing once the new one swept; kill -9 and take-over", async () => {
    const { cluster } = fixture;
    const prefix = uniquePrefix("leaders");
    const streams = cluster.keysOnEveryMaster(prefix);
    const originals = new Map<string, string[]>();
    for (const stream of streams)
      originals.set(stream, await addStuckEntries(redis, stream, "workers", numberedBodies(1000)));
    const total = 1000 * streams.length;
    const path = await configPath(
      clusterTestConfig(
        cluster,
        prefix,
        streams.map((stream) => ({ stream, minIdleMs: 60_000 })),
        {
          // At most 50 entries per group per 100 ms: 1,000 per stream take about 2 s to drain, so
          // the freeze lands in the middle even when this process is descheduled for a while
          // (without the cap the leader once drained all 3,000 before SIGSTOP, at load 6).
          sweep: {
            intervalMs: 100,
            batchSize: 20,
            maxScriptMs: 2,
            maxEntriesPerGroup: 50,
            consumerName: "stream-janitor",
          },
        },
      ),
    );
    const daemons = await Promise.all([start(path), start(path)]);
    const leader = await waitFor(
      async () => {
        const flags = await Promise.all(daemons.map((daemon) => daemon.isLeader()));
        return flags.filter(Boolean).length === 1 ? daemons[flags.indexOf(true)] : undefined;
      },
      { what: "exactly one leader" },
    );
    const standby = daemons.find((daemon) => daemon !== leader) as DaemonProcess;
    expect(await standby.isLeader()).toBe(false);
    await waitFor(async () => (await pendingTotal(redis, streams)) < total - 200, {
      what: "the sweep to start",
    });
    leader.signal("SIGSTOP");
    expect(await pendingTotal(redis, streams)).toBeGreaterThan(0);

    // Past its TTL the standby takes over and sweeps every stream, on every master.
    await waitFor(() => standby.isLeader(), { what: "the standby to take over" });
    await waitFor(async () => (await pendingTotal(redis, streams)) === 0, {
      timeoutMs: 30_000,
      what: "the PEL to drain",
    });
    const newToken = String(await standby.metric("stream_janitor_fencing_token"));
    for (const stream of streams) {
      const fence = await (
        await cluster.ownerOf(stream)
      )
        .client()
        .get(slotFenceKey(stream, `${prefix}:lease`));
      expect(fence).toBe(newToken);
    }
    const lengths = async () =>
      Promise.all(streams.flatMap((s) => [redis.xlen(s), redis.xlen(`{${s}}:dead`)]));
    const before = await lengths();

    // The frozen leader resumes: it finds its term over and changes nothing.
    leader.signal("SIGCONT");
    await leader.waitForLog((line) => line.msg === "lease lost");
    await waitFor(async () => !(await leader.isLeader()), { what: "the old leader to step down" });
    expect(await lengths()).toEqual(before);
    expect(await pendingTotal(redis, streams)).toBe(0);

    // kill -9 of the current leader: the resumed process takes over after the TTL.
    const logged = leader.logs.length;
    const killedAt = Date.now();
    standby.signal("SIGKILL");
    await waitFor(() => leader.isLeader(), { what: "the resumed process to lead" });
    // Up to the resumed process's own log line: how slowly this process notices is not the
    // take-over.
    const acquired = leader.logs.slice(logged).find((line) => line.msg === "lease acquired");
    expect(acquired).toBeDefined();
    const takeoverMs = Number(acquired?.time) - killedAt;
    console.log(`cluster take-over after kill -9: ${takeoverMs.toFixed(0)} ms (ttl 1500 ms)`);
    expect(takeoverMs).toBeLessThan(1500 + 1.2 * 200 + 1000);

    for (const stream of streams) {
      await expect(
        expectExactlyOnce(redis, {
          stream,
          group: "workers",
          deadLetterStream: `{${stream}}:dead`,
          originalIds: originals.get(stream) ?? [],
        }),
      ).resolves.toMatchObject({ requeued: 1000 });
    }
  });

  it("a master that stops answering drops only the gauges of the groups it serves", async () => {
    const { cluster } = fixture;
    const prefix = uniquePrefix("scrape");
    const streams = cluster.keysOnEveryMaster(prefix);
    for (const stream of streams)
      await addStuckEntries(redis, stream, "workers", numberedBodies(3));
    const base = clusterTestConfig(
      cluster,
      prefix,
      streams.map((stream) => ({ stream, action: "monitor" as const })),
    );
    const daemon = await start(
      await configPath({ ...base, metrics: { ...base.metrics, scrapeTimeoutMs: 300 } }),
    );
    const pending = "stream_janitor_pending_entries";
    await waitFor(async () => (await samplesByStream(daemon, pending)).size === 3, {
      what: "gauges of the three groups",
    });
    expect([...(await samplesByStream(daemon, pending)).values()]).toEqual([3, 3, 3]);

    const silent = await cluster.ownerOf(streams[1] ?? "");
    silent.process.kill("SIGSTOP");
    try {
      const startedAt = performance.now();
      const samples = await samplesByStream(daemon, pending);
      expect(performance.now() - startedAt).toBeLessThan(2000);
      expect([...samples.keys()].sort()).toEqual([streams[0], streams[2]].sort());
      // Not even "unreadable": nothing is known about the silent master's groups.
      const readable = await samplesByStream(daemon, "stream_janitor_group_readable");
      expect(Object.fromEntries(readable)).toEqual({
        [streams[0] ?? ""]: 1,
        [streams[2] ?? ""]: 1,
      });
      expect(await daemon.metric("stream_janitor_redis_up")).toBe(1);
    } finally {
      silent.process.kill("SIGCONT");
    }
    await cluster.waitUntilStable();
    await waitFor(async () => (await samplesByStream(daemon, pending)).size === 3, {
      what: "the gauges to come back",
    });
  });
});
