import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { startDelayProxy } from "../support/delayProxy.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { seededRandom } from "../support/seededRandom.js";
import { ChaosProducer } from "./producer.js";

const fixture = useRedisServer();
let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describe("the chaos producer", () => {
  it("writes its minimum number of entries even when a starved host lets few through before stop()", async () => {
    // A slow link stands for a host too busy to write one entry every 40 ms: the schedule's
    // active phase ends (stop()) before a single reply came back.
    const proxy = await startDelayProxy(fixture.server.port, 100);
    cleanup.push(() => proxy.close());
    const redis = new Redis({ port: proxy.port, host: "127.0.0.1", protocol: 2 });
    cleanup.push(() => Promise.resolve(redis.disconnect()));
    const stream = `${uniquePrefix("producer")}:orders`;
    const producer = new ChaosProducer(redis, seededRandom(3), 100);
    const producing = producer.run([stream], 40, 30);
    producer.stop();
    await producing;
    expect(producer.counts.produced).toBe(30);
    expect(await fixture.redis.xlen(stream)).toBe(30);
  });
});
