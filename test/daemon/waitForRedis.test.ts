import { getEventListeners } from "node:events";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { waitForRedis } from "../../src/daemon/waitForRedis.js";
import type { RedisClient } from "../../src/redis/RedisClient.js";

describe("waitForRedis", () => {
  it("leaves no abort listener behind across many retries (no MaxListenersExceededWarning)", async () => {
    const controller = new AbortController();
    let attempts = 0;
    let mostListeners = 0;
    // Pure retry logic: a client that never answers, as against a closed port.
    const down = {
      info: () => {
        attempts += 1;
        mostListeners = Math.max(
          mostListeners,
          getEventListeners(controller.signal, "abort").length,
        );
        if (attempts === 50) controller.abort();
        return Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:1"));
      },
    } as unknown as RedisClient;
    await expect(
      waitForRedis(down, pino({ level: "silent" }), controller.signal, () => 1),
    ).rejects.toThrow();
    expect(attempts).toBe(50);
    expect(mostListeners).toBe(0);
  });
});
