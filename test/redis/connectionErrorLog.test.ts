import type { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../../src/demo/spawnRedisServer.js";
import { createRedisClient } from "../../src/redis/createRedisClient.js";
import { captureLogger } from "../support/sweepHarness.js";
import { waitFor } from "../support/waitFor.js";

const clients: Redis[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect();
});

describe("connection errors in the log", () => {
  it("logs an outage of every Sentinel once, although ioredis words each retry differently", async () => {
    // Nothing listens there: every round of Sentinels fails, and ioredis' message carries the
    // next retry delay ("Retrying from scratch after 10ms", "20ms", ...), which grows each time.
    const port = await freePort();
    const { logger, lines } = captureLogger();
    const client = createRedisClient({
      url: "redis://janitor-primary",
      password: "",
      mode: "sentinel",
      nodes: [`127.0.0.1:${port}`],
      masterName: "janitor-primary",
      connectionName: "stream-janitor:test",
      commandTimeoutMs: 1000,
      logger,
    });
    clients.push(client);
    const messages: string[] = [];
    client.on("error", (error: Error) => messages.push(error.message));
    // Connecting never succeeds here; the retries go on until the test disconnects the client.
    client.connect().catch(() => undefined);
    await waitFor(() => new Set(messages).size >= 4, {
      timeoutMs: 10_000,
      what: "four differently worded Sentinel outages",
    });
    const logged = lines.filter((line) => line.msg === "redis connection error");
    expect(logged).toHaveLength(1);
    expect(JSON.stringify(logged[0]?.err)).toMatch(/All sentinels are unreachable/u);
  });
});
