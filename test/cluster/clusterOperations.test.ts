import { writeFile } from "node:fs/promises";
import type { Cluster } from "ioredis";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { JanitorConfig } from "../../src/core/configTypes.js";
import { Maintenance } from "../../src/maintenance/Maintenance.js";
import { discoverGroups } from "../../src/discovery/discoverGroups.js";
import { createMaintenanceMetrics } from "../../src/metrics/maintenanceMetrics.js";
import { connectRedis } from "../../src/redis/connectRedis.js";
import { keySlot } from "../../src/core/keySlot.js";
import { registerScripts, type ScriptedRedis } from "../../src/scripts/scriptedRedis.js";
import { defaultDeadLetterStream } from "../../src/core/resolveGroup.js";
import { slotFenceKey } from "../../src/core/fence.js";
import { pattern } from "../discovery/discoveryHarness.js";
import { addDeadLetters, fieldValue, rawEntries } from "../operator/deadLetterFixtures.js";
import { aclLinesForTest } from "../support/aclFile.js";
import { clusterTestConfig } from "../support/clusterTestConfig.js";
import { DaemonProcess, runCli, writeConfigFile } from "../support/daemonProcess.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { useRedisCluster } from "../support/redisCluster.js";
import { uniquePrefix } from "../support/redisServer.js";
import { captureLogger, groupConfig, neverAborted } from "../support/sweepHarness.js";
import { waitFor } from "../support/waitFor.js";

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function configPath(config: JanitorConfig): Promise<string> {
  const file = await writeConfigFile(config);
  cleanups.push(file.remove);
  return file.path;
}

async function pending(redis: Cluster, stream: string): Promise<number> {
  return ((await redis.call("XPENDING", stream, "workers")) as [number])[0];
}

describe("operations on Redis Cluster (three masters)", () => {
  const fixture = useRedisCluster();
  let redis: Cluster;
  beforeAll(() => {
    redis = fixture.cluster.client();
  });

  /** The janitor's own client of the cluster, as the daemon and the CLI make it (lazy). */
  const janitorClient = (config: JanitorConfig): ScriptedRedis => {
    const client = connectRedis(config.redis, {
      connectionName: "stream-janitor:test",
      commandTimeoutMs: 5000,
      logger: pino({ level: "silent" }),
    });
    cleanups.push(() => client.disconnect());
    return registerScripts(client);
  };

  it("discovery SCANs every master, and finds a stream whose slot is migrating", async () => {
    const { cluster } = fixture;
    const prefix = uniquePrefix("discover");
    const streams = cluster.keysOnEveryMaster(`${prefix}:events`);
    const moving = `${prefix}:events:moving`;
    for (const stream of [...streams, moving])
      await redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    const from = await cluster.ownerOf(moving);
    const to = cluster.masters.find((master) => master !== from);
    if (to === undefined) throw new Error("unreachable");
    // Half-way through a migration: the key is on the importing node, which SCAN lists but
    // which answers MOVED to any command about it that does not come with ASKING.
    const migration = await cluster.startMigration(keySlot(moving), to);
    cleanups.push(() => migration.finish());
    await migration.moveKeys([moving]);

    const config = clusterTestConfig(cluster, prefix, [], {
      discover: [
        pattern(`${prefix}:events:*`, { deadLetterMaxLen: 1_000_000, reapConsumersIdleMs: 0 }),
      ],
    });
    const groups = await discoverGroups(janitorClient(config), config);
    expect(groups.map((group) => group.id).sort()).toEqual(
      [...streams, moving].map((stream) => `${stream}/workers`).sort(),
    );
  });

  it("dlq redrive through the CLI moves the dead letters of streams on every master", async () => {
    const { cluster } = fixture;
    const prefix = uniquePrefix("redrive");
    const streams = cluster.keysOnEveryMaster(`${prefix}:orders`);
    const path = await configPath(
      clusterTestConfig(
        cluster,
        prefix,
        streams.map((stream) => ({ stream })),
      ),
    );
    const letters = new Map<string, Buffer[][]>();
    for (const stream of streams) {
      // The group must exist: the operator commands refuse a missing stream or group.
      await redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
      const deadLetterStream = defaultDeadLetterStream(stream);
      const added = await addDeadLetters(redis, {
        stream,
        group: "workers",
        deadLetterStream,
        count: 4,
      });
      letters.set(
        stream,
        added.map((letter) => letter.fields),
      );
    }
    const runs = await Promise.all(
      streams.map((stream) =>
        runCli([
          "dlq",
          "redrive",
          "--config",
          path,
          "--stream",
          stream,
          "--group",
          "workers",
          "--json",
        ]),
      ),
    );
    for (const [index, stream] of streams.entries()) {
      const run = runs[index];
      expect(run?.stderr).toBe("");
      expect(JSON.parse(run?.stdout ?? "")).toEqual({ redriven: 4, remaining: 0, dryRun: false });
      expect(await redis.xlen(defaultDeadLetterStream(stream))).toBe(0);
      const copies = await rawEntries(redis, stream);
      // Original fields first, byte for byte, then the redrive metadata.
      expect(copies.map(([, fields]) => fields.slice(0, 8))).toEqual(letters.get(stream));
      expect(copies.map(([, fields]) => fieldValue(fields, "x-redrive-count"))).toEqual([
        "1",
        "1",
        "1",
        "1",
      ]);
    }
  });

  it("reaping and retention on every master are fenced per slot: a stale token changes nothing", async () => {
    const { cluster } = fixture;
    const prefix = uniquePrefix("maintain");
    const streams = cluster.keysOnEveryMaster(`${prefix}:s`);
    for (const stream of streams) {
      for (let i = 0; i < 10; i += 1) await redis.xadd(stream, "*", "n", String(i));
      await redis.xgroup("CREATE", stream, "workers", "$");
      await redis.xgroup("CREATECONSUMER", stream, "workers", "gone");
    }
    const leaseKey = `${prefix}:lease`;
    const config = clusterTestConfig(cluster, prefix);
    const { logger, lines } = captureLogger();
    const maintenance = new Maintenance({
      redis: janitorClient(config),
      logger,
      metrics: createMaintenanceMetrics(new Registry()),
      retention: streams.map((stream) => ({ stream, maxLen: 3, maxAgeMs: 0 })),
      janitorConsumer: "stream-janitor",
      maxTrimmedPerPass: 100_000,
    });
    const groups = streams.map((stream) =>
      groupConfig(stream, { action: "monitor", reapConsumersIdleMs: 1 }),
    );
    const fence = (slotToken: number) => ({ key: leaseKey, value: "unused", slotToken });
    await waitFor(async () => {
      // The consumers must have been idle for reapConsumersIdleMs (1 ms) first.
      for (const stream of streams) {
        const [info] = (await redis.call("XINFO", "CONSUMERS", stream, "workers")) as unknown[][];
        if (info === undefined || Number(info[info.indexOf("idle") + 1]) < 1) return false;
      }
      return true;
    });

    await maintenance.run(groups, [], fence(5), neverAborted);
    for (const stream of streams) {
      expect(await redis.xlen(stream)).toBe(3);
      expect(await redis.call("XINFO", "CONSUMERS", stream, "workers")).toEqual([]);
      expect(await redis.get(slotFenceKey(stream, leaseKey))).toBe("5");
    }

    // A leader that lost the lease (token 4) after the new one (token 5) maintained these.
    for (const stream of streams) await redis.xadd(stream, "*", "late", "1");
    await maintenance.run(groups, [], fence(4), neverAborted);
    for (const stream of streams) {
      expect(await redis.xlen(stream)).toBe(4);
      expect(await redis.get(slotFenceKey(stream, leaseKey))).toBe("5");
    }
    expect(
      lines.some(
        (line) => line.msg === "maintenance stopped: the lease is held by another process",
      ),
    ).toBe(true);
  });

  it("a daemon on Cluster under the ACL user: SIGHUP adds groups and retention on other masters; inspect (read-only user) names it as the lease holder", async () => {
    const { cluster } = fixture;
    const prefix = uniquePrefix("reload");
    const streams = cluster.keysOnEveryMaster(`${prefix}:s`);
    for (const stream of streams)
      await addStuckEntries(redis, stream, "workers", numberedBodies(5));
    const [first, second, third] = streams as [string, string, string];
    // Under the least-privilege users of deploy/redis/stream-janitor.acl, loaded on every master.
    const password = "cluster-acl-secret";
    const masters = cluster.masters.map((node) => node.client());
    for (const line of await aclLinesForTest(password, [`${prefix}:*`, `{${prefix}:*`])) {
      const [, ...rules] = line.split(" ");
      for (const master of masters) await master.call("ACL", "SETUSER", ...rules);
    }
    for (const master of masters) await master.call("ACL", "LOG", "RESET");
    const asUser = (config: JanitorConfig, username: string): JanitorConfig => ({
      ...config,
      redis: { ...config.redis, username, password },
    });
    const before = asUser(
      clusterTestConfig(cluster, prefix, [{ stream: first }]),
      "stream-janitor",
    );
    const path = await configPath(before);
    const daemon = await DaemonProcess.start(path);
    cleanups.push(() => daemon.kill());
    await waitFor(async () => (await pending(redis, first)) === 0, { what: "the first sweep" });
    expect(await pending(redis, second)).toBe(5);

    const after = asUser(
      clusterTestConfig(
        cluster,
        prefix,
        streams.map((stream) => ({ stream })),
        { retention: [{ stream: third, maxLen: 2, maxAgeMs: 0 }] },
      ),
      "stream-janitor",
    );
    await writeFile(path, JSON.stringify(after));
    daemon.signal("SIGHUP");
    await daemon.waitForLog((line) => line.msg === "configuration reloaded");
    await waitFor(
      async () =>
        (await pending(redis, second)) === 0 &&
        (await pending(redis, third)) === 0 &&
        // The five acknowledged originals; the requeued copies are not delivered yet, so
        // retention keeps them whatever maxLen says.
        (await redis.xlen(third)) === 5,
      { what: "the new groups swept and the retention stream trimmed" },
    );
    expect(await daemon.isLeader()).toBe(true);
    // The token and the fences read at one moment: a renewal that timed out on a loaded host
    // takes the lease again with the next token, and the fences follow at the next sweep (the
    // token read once, then the fences, saw fence 3 against token 2).
    let token = "";
    let fences: (string | null)[] = [];
    await waitFor(
      async () => {
        token = String(await daemon.metric("stream_janitor_fencing_token"));
        fences = await Promise.all(
          streams.map((stream) => redis.get(slotFenceKey(stream, before.lease.key))),
        );
        const stable = token === String(await daemon.metric("stream_janitor_fencing_token"));
        return stable && fences.every((fence) => fence === token);
      },
      { what: "every stream's fence to hold the leader's fencing token" },
    );
    for (const fence of fences) expect(fence).toBe(token);

    const operator = await configPath(asUser(after, "stream-janitor-operator"));
    const inspect = await runCli(["inspect", "--config", operator, "--json"]);
    expect(inspect.code).toBe(0);
    const report = JSON.parse(inspect.stdout) as {
      lease: Record<string, unknown>;
      groups: Record<string, unknown>[];
    };
    expect(report.lease).toMatchObject({
      key: before.lease.key,
      held: true,
      holderPid: daemon.pid,
      fencingToken: Number(token),
    });
    expect(report.groups.map((group) => [group.stream, group.error, group.pending])).toEqual(
      streams.map((stream) => [stream, undefined, 0]),
    );
    for (const master of masters) expect(await master.call("ACL", "LOG")).toEqual([]);
  });
});
