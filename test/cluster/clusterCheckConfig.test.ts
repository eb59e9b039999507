import { afterAll, describe, expect, it } from "vitest";
import { keySlot } from "../../src/core/keySlot.js";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import { useRedisCluster } from "../support/redisCluster.js";
import { uniquePrefix } from "../support/redisServer.js";
import { clusterTestConfig } from "../support/clusterTestConfig.js";

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(cleanups.map((cleanup) => cleanup()));
});

describe("check-config on Redis Cluster", () => {
  const fixture = useRedisCluster();

  it("reports a discovered group whose requeue target is in another slot, as run refuses it", async () => {
    const stream = uniquePrefix("cc-orders");
    // A target outside the stream's slot (a key without braces hashes whole).
    let target = `${stream}:retry`;
    for (let n = 0; keySlot(target) === keySlot(stream); n += 1) target = `${stream}:retry${n}`;
    const redis = fixture.cluster.client();
    try {
      await redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    } finally {
      redis.disconnect();
    }
    const config = clusterTestConfig(fixture.cluster, stream, [], {
      discover: [
        {
          match: stream,
          groups: "*",
          minIdleMs: 1000,
          maxDeliveries: 5,
          action: "requeue",
          requeueStream: target,
          deadLetterStream: "",
          deadLetterMaxLen: 100_000,
          reapConsumersIdleMs: 0,
        },
      ],
    });
    const file = await writeConfigFile(config);
    cleanups.push(file.remove);
    const result = await runCli(["check-config", "--config", file.path]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(
      `refusing ${stream}/workers: its requeueStream must be on Redis Cluster a stream in the hash slot of stream "${stream}"`,
    );
  });
});
