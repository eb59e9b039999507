import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plainRedisConfig } from "../../src/config/defaultConfig.js";
import { runCli, writeConfigFile } from "../support/daemonProcess.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { startRedis, uniquePrefix, type RedisServer } from "../support/redisServer.js";
import { testConfig } from "../support/testConfig.js";

let dir: string;
let socket: string;
let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sj-unix-"));
  socket = join(dir, "redis.sock");
  server = await startRedis(["--unixsocket", socket, "--unixsocketperm", "700"]);
  redis = server.client();
});
afterAll(async () => {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("unix:// URLs", () => {
  it("sweeps through a unix socket", async () => {
    const prefix = uniquePrefix("unix");
    const stream = `${prefix}:stream`;
    await addStuckEntries(redis, stream, "workers", numberedBodies(25));
    const url = `unix://${socket}`;
    const config = testConfig(url, prefix, [{}], { redis: plainRedisConfig(url) });
    const file = await writeConfigFile(config);
    try {
      const result = await runCli(["sweep", "--json", "--config", file.path]);
      expect(result.code, result.stderr).toBe(0);
      const summary = JSON.parse(result.stdout) as {
        groups: { claimed: number; requeued: number }[];
      };
      expect(summary.groups[0]).toMatchObject({ claimed: 25, requeued: 25 });
      expect((await redis.xpending(stream, "workers"))[0]).toBe(0);
    } finally {
      await file.remove();
    }
  });
});
