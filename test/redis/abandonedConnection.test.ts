import type { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { createRedisClient } from "../../src/redis/createRedisClient.js";
import { useRedisServer } from "../support/redisServer.js";
import { captureLogger } from "../support/sweepHarness.js";
import { waitFor } from "../support/waitFor.js";

const fixture = useRedisServer();
const clients: Redis[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect();
});

/** Resolves on "end" only (events.once would reject on the "error" that precedes it). */
function endOf(client: Redis): Promise<void> {
  return new Promise((resolve) => client.once("end", () => resolve()));
}

function productClient() {
  const { logger, lines } = captureLogger();
  const client = createRedisClient({
    url: fixture.server.url,
    password: "",
    connectionName: "stream-janitor:test",
    commandTimeoutMs: 1000,
    logger,
  });
  clients.push(client);
  return { client, lines };
}

/**
 * The path ioredis' Sentinel FailoverDetector takes on +switch-master: it calls the connector's
 * disconnect(). Arriving while the client is reconnecting (its primary just died), it makes the
 * connector's connect() throw "Connection is closed", and ioredis then ends the client for good.
 * Private API on purpose: it is exactly what ioredis does to itself.
 */
function failoverDetectorDisconnect(client: Redis): void {
  (client as unknown as { connector: { disconnect(): void } }).connector.disconnect();
}

describe("a connection ioredis gives up on", () => {
  it("is connected again when the product did not close it (Sentinel failover during a reconnect)", async () => {
    const { client, lines } = productClient();
    const ended = endOf(client);
    const connecting = client.connect();
    failoverDetectorDisconnect(client);
    await expect(connecting).rejects.toThrow(/Connection is closed/u);
    await ended;
    // Without the product's own recovery the client stays "end" and every command fails forever.
    await waitFor(() => client.status === "ready", { what: "the client to be connected again" });
    expect(await client.ping()).toBe("PONG");
    expect(lines.some((line) => String(line.msg).includes("connecting again"))).toBe(true);
  });

  it("stays closed when the product closes it", async () => {
    const { client, lines } = productClient();
    await client.connect();
    const ended = endOf(client);
    client.disconnect();
    await ended;
    // The decision is made (and logged) in the client's own "end" listener, before this one runs.
    expect(lines.filter((line) => String(line.msg).includes("connecting again"))).toEqual([]);
    expect(client.status).toBe("end");
  });
});
