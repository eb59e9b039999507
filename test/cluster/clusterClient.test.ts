import { pino } from "pino";
import { Registry } from "prom-client";
import { EventWriter } from "../../src/events/EventWriter.js";
import { createEventMetrics } from "../../src/metrics/eventMetrics.js";
import { afterEach, describe, expect, it } from "vitest";
import { pipelinePerNode } from "../../src/redis/pipeline/pipelinePerNode.js";
import { RedisTimeoutError, RedisUnavailableError } from "../../src/redis/pipeline/runPipeline.js";
import { connectionOfKey } from "../../src/redis/connectionOfKey.js";
import { createClusterClient } from "../../src/redis/createClusterClient.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { useRedisCluster } from "../support/redisCluster.js";
import { uniquePrefix } from "../support/redisServer.js";

const silent = pino({ level: "silent" });

describe("cluster client and per-node pipelines (three masters)", () => {
  const fixture = useRedisCluster();
  const opened: { disconnect(): void }[] = [];
  afterEach(() => {
    for (const client of opened.splice(0)) client.disconnect();
  });
  const janitorClient = (commandTimeoutMs = 2000) => {
    const { cluster } = fixture;
    const client = createClusterClient({
      url: cluster.seedUrl,
      nodes: cluster.seedNodes,
      password: "",
      connectionName: "stream-janitor:test",
      commandTimeoutMs,
      logger: silent,
    });
    opened.push(client);
    return client;
  };

  it("writes advisory events to an events stream in a slot of its own, whatever master owns it", async () => {
    const { cluster } = fixture;
    const redis = registerScripts(janitorClient());
    const keys = cluster.keysOnEveryMaster(uniquePrefix("events"));
    for (const key of keys) {
      const writer = new EventWriter({
        redis,
        streamKey: key,
        maxLen: 100,
        by: "h:1",
        metrics: createEventMetrics(new Registry()),
      });
      writer.write({ type: "ghosts", stream: "orders", group: "billing", count: 1, ids: ["1-1"] });
      await writer.settled();
      const owner = await cluster.ownerOf(key);
      const entries = await owner.client().xrange(key, "-", "+");
      expect(entries.map(([, fields]) => fields.slice(0, 2))).toEqual([["type", "ghosts"]]);
    }
  });

  it("finds every master from the seeds and names its connections on each", async () => {
    const { cluster } = fixture;
    const redis = janitorClient();
    const keys = cluster.keysOnEveryMaster(uniquePrefix("seed"));
    for (const key of keys) await redis.set(key, key);
    const owners = await Promise.all(keys.map((key) => cluster.ownerOf(key)));
    expect(new Set(owners.map((node) => node.port)).size).toBe(3);
    for (const [i, key] of keys.entries()) {
      const owner = owners[i];
      if (owner === undefined) throw new Error("unreachable");
      const direct = owner.client();
      expect(await direct.get(key)).toBe(key);
      expect(String(await direct.call("CLIENT", "LIST"))).toContain("name=stream-janitor:test");
    }
  });

  it("pipelinePerNode sends one pipeline per node and hands each key its own replies", async () => {
    const { cluster } = fixture;
    const redis = janitorClient();
    const keys = cluster.keysOnEveryMaster(uniquePrefix("streams"));
    for (const [i, key] of keys.entries())
      for (let n = 0; n <= i; n += 1) await redis.xadd(key, "*", "n", String(n));
    const wrongType = `{${keys[0] ?? ""}}:string`;
    await redis.set(wrongType, "x");
    const outcomes = await pipelinePerNode(
      redis,
      [
        ...keys.map((key) => ({ key, commands: [["TIME"], ["XLEN", key]] as const })),
        { key: wrongType, commands: [["XLEN", wrongType]] as const },
      ],
      2000,
    );
    expect(outcomes.map((o) => o.replies?.[1]?.value)).toEqual([1, 2, 3, undefined]);
    expect(outcomes[3]?.replies?.[0]?.error?.message).toMatch(/^WRONGTYPE/u);
    expect(new Set(outcomes.map((o) => o.node)).size).toBe(3);
    const owners = await Promise.all(keys.map((key) => cluster.ownerOf(key)));
    expect(outcomes.slice(0, 3).map((o) => o.node)).toEqual(owners.map((o) => o.address));
  });

  it("a node that does not answer fails only its own batches, within the timeout", async () => {
    const { cluster } = fixture;
    const redis = janitorClient(5000);
    const keys = cluster.keysOnEveryMaster(uniquePrefix("frozen"));
    for (const key of keys) await redis.xadd(key, "*", "f", "v");
    const frozen = await cluster.ownerOf(keys[1] ?? "");
    frozen.process.kill("SIGSTOP");
    try {
      const startedAt = performance.now();
      const outcomes = await pipelinePerNode(
        redis,
        keys.map((key) => ({ key, commands: [["XLEN", key]] as const })),
        300,
      );
      // Its own 300 ms timeout ended the frozen node's batch (the error says so), not the
      // client's 5 s command timeout (the bound below): a cause, not a margin of ms.
      expect(outcomes[1]?.error).toBeInstanceOf(RedisTimeoutError);
      expect(outcomes[1]?.error?.message).toMatch(/^redis did not answer within \d/u);
      expect(performance.now() - startedAt).toBeLessThan(5000);
      // A timeout is a RedisUnavailableError (its subclass RedisTimeoutError).
      const unavailable = (error: Error | undefined) =>
        error instanceof RedisUnavailableError ? "RedisUnavailableError" : error?.name;
      expect(outcomes.map((o) => o.replies?.[0]?.value ?? unavailable(o.error))).toEqual([
        1,
        "RedisUnavailableError",
        1,
      ]);
    } finally {
      frozen.process.kill("SIGCONT");
    }
    await cluster.waitUntilStable();
  });

  it("connectionOfKey gives the connection to the master serving the key (for WAIT)", async () => {
    const { cluster } = fixture;
    const redis = janitorClient();
    const keys = cluster.keysOnEveryMaster(uniquePrefix("wait"));
    for (const key of keys) await redis.set(key, "written");
    for (const key of keys) {
      const connection = connectionOfKey(redis, key);
      expect(connection.options.port).toBe((await cluster.ownerOf(key)).port);
      // WAIT on that connection counts the write just made there (no replicas here: 0 of 0).
      expect(await connection.call("WAIT", 0, 100)).toBe(0);
      expect(await connection.get(key)).toBe("written");
    }
  });
});
