import { afterEach, describe, expect, it, vi } from "vitest";
import type { RedisClient } from "../../src/redis/RedisClient.js";
import {
  answerWithin,
  RedisTimeoutError,
  RedisUnavailableError,
  requireConnected,
  runPipeline,
} from "../../src/redis/pipeline/runPipeline.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("answerWithin (the time bound of pipelines and scrape scripts)", () => {
  it("rejects with RedisTimeoutError when the answer does not come in time, and drops a late failure", async () => {
    vi.useFakeTimers();
    let fail: (error: Error) => void = () => undefined;
    const call = new Promise<string>((_, reject) => (fail = reject));
    const answer = answerWithin(call, 50, "redis did not answer within 50 ms");
    const outcome = expect(answer).rejects.toThrow(RedisTimeoutError);
    await vi.advanceTimersByTimeAsync(50);
    await outcome;
    fail(new Error("late"));
    await Promise.resolve();
  });

  it("passes the answer (or a failure) through, bounded or not", async () => {
    await expect(answerWithin(Promise.resolve("OK"), 1000, "")).resolves.toBe("OK");
    await expect(answerWithin(Promise.resolve("OK"), undefined, "")).resolves.toBe("OK");
    await expect(answerWithin(Promise.reject(new Error("ERR x")), 1000, "")).rejects.toThrow(
      "ERR x",
    );
  });
});

describe("requireConnected", () => {
  it("fails at once while the connection is down, so commands never wait in the offline queue", () => {
    const down = { status: "reconnecting" } as RedisClient;
    expect(() => requireConnected(down)).toThrow(RedisUnavailableError);
    expect(() => requireConnected({ status: "ready" } as RedisClient)).not.toThrow();
  });
});

describe("runPipeline with a bound already spent (a caller's deadline passed before this batch)", () => {
  it("fails at once with RedisTimeoutError, sends nothing, and names no negative time", async () => {
    const sent: string[] = [];
    const client = {
      status: "ready",
      pipeline: () => {
        sent.push("pipeline");
        throw new Error("nothing should be sent");
      },
    } as unknown as RedisClient;
    const outcome = runPipeline(client, [["PING"]], -70);
    await expect(outcome).rejects.toThrow(RedisTimeoutError);
    await expect(outcome).rejects.toThrow(
      "redis did not answer in time: the time bound was spent before the pipeline was sent",
    );
    expect(sent).toEqual([]);
  });
});
