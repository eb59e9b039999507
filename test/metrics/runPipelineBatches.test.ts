import { describe, expect, it, vi } from "vitest";
import { RedisTimeoutError, type Command } from "../../src/redis/pipeline/runPipeline.js";
import { runPipelineBatches } from "../../src/redis/pipeline/runPipelineBatches.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";

const fixture = useRedisServer();

describe("runPipelineBatches", () => {
  it("sends bounded pipelines and returns every reply in order, errors in their place", async () => {
    const prefix = uniquePrefix("batches");
    const keys = Array.from({ length: 25 }, (_, i) => `${prefix}:${i}`);
    for (const [i, key] of keys.entries()) {
      if (i === 7) await fixture.redis.set(key, "not a stream");
      else await fixture.redis.xadd(key, "*", "n", String(i));
    }
    const sizes: number[] = [];
    const pipeline = fixture.redis.pipeline.bind(fixture.redis);
    const spy = vi.spyOn(fixture.redis, "pipeline").mockImplementation((...args) => {
      const created = pipeline(...args);
      const exec = created.exec.bind(created);
      created.exec = (callback) => {
        sizes.push(created.length);
        return exec(callback);
      };
      return created;
    });
    try {
      const commands: Command[] = keys.map((key) => ["XLEN", key]);
      const replies = await runPipelineBatches(fixture.redis, commands, {
        timeoutMs: 5000,
        batchSize: 10,
      });
      expect(sizes).toEqual([10, 10, 5]);
      expect(replies).toHaveLength(25);
      expect(replies[7]?.error?.message).toMatch(/WRONGTYPE/u);
      expect(replies.filter((_, i) => i !== 7).map((reply) => reply.value)).toEqual(
        keys.filter((_, i) => i !== 7).map(() => 1),
      );
    } finally {
      spy.mockRestore();
    }
  });

  it("bounds all the batches together: past the deadline it fails with the whole bound", async () => {
    const prefix = uniquePrefix("deadline");
    // A clock that moves 600 ms at each reading: the second batch starts after the 1 s bound.
    let clock = 0;
    const now = (): number => (clock += 600);
    const commands: Command[] = Array.from({ length: 4 }, (_, i) => ["XLEN", `${prefix}:${i}`]);
    const run = runPipelineBatches(fixture.redis, commands, { timeoutMs: 1000, batchSize: 2, now });
    await expect(run).rejects.toThrow(RedisTimeoutError);
    await expect(run).rejects.toThrow("redis did not answer within 1000 ms");
  });

  it("sends nothing for no commands", async () => {
    expect(await runPipelineBatches(fixture.redis, [], { timeoutMs: 1000 })).toEqual([]);
  });
});
