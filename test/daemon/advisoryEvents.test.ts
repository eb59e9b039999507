import { hostname } from "node:os";
import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { createJanitor, namedConnections } from "../../src/daemon/createJanitor.js";
import type { RedisClient } from "../../src/redis/RedisClient.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { testConfig } from "../support/testConfig.js";

const fixture = useRedisServer();
const silent = pino({ level: "silent" });
const cleanup: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function janitorFor(prefix: string) {
  const config = testConfig(fixture.server.url, prefix);
  const open = namedConnections(config, silent);
  const clients: RedisClient[] = [];
  cleanup.push(() => {
    for (const client of clients) client.disconnect();
  });
  const registry = new Registry();
  const janitor = createJanitor(config, {
    logger: silent,
    registry,
    version: "test",
    connect: (name, commandTimeoutMs, failFast = false) => {
      const client = open(name, commandTimeoutMs, failFast);
      clients.push(client);
      return client;
    },
  });
  cleanup.push(() => janitor.lease.stop());
  return { config, janitor, registry };
}

/** The events written so far, as field records. */
async function eventsIn(key: string): Promise<Record<string, string>[]> {
  const entries = await fixture.redis.xrange(key, "-", "+");
  return entries.map(([, fields]) =>
    Object.fromEntries(
      fields.flatMap((value, i) => (i % 2 === 0 ? [[value, fields[i + 1] ?? ""]] : [])),
    ),
  );
}

describe("advisory events of the leader", () => {
  it("writes lease-acquired, one event per action per group that did anything, ghosts with ids, and lease-lost", async () => {
    const prefix = uniquePrefix("leader-events");
    const requeueStream = `${prefix}:requeue`;
    const deadStream = `${prefix}:dead`;
    const idleStream = `${prefix}:idle`;
    await addStuckEntries(fixture.redis, requeueStream, "workers", numberedBodies(3));
    const deadIds = await addStuckEntries(fixture.redis, deadStream, "workers", numberedBodies(4));
    // One pending entry deleted from the stream: a ghost.
    await fixture.redis.xdel(deadStream, deadIds[0] ?? "");
    await fixture.redis.xgroup("CREATE", idleStream, "workers", "$", "MKSTREAM");
    const { config, janitor, registry } = janitorFor(prefix);
    const { supervisor } = janitor.createSweepWork(config, [
      groupConfig(requeueStream),
      groupConfig(deadStream, { action: "dead-letter" }),
      groupConfig(idleStream),
    ]);

    await janitor.lease.tryAcquireOnce();
    await supervisor.supervise();
    // A second sweep finds nothing to do: it writes nothing.
    await supervisor.supervise();
    await supervisor.stop();
    await janitor.lease.stop();
    await janitor.events.settled();

    const by = `${hostname()}:${process.pid}`;
    const events = await eventsIn(config.events.stream);
    expect(events.map(({ type, stream }) => [type, stream])).toEqual([
      ["lease-acquired", ""],
      ["requeued", requeueStream],
      ["dead-lettered", deadStream],
      ["ghosts", deadStream],
      ["lease-lost", ""],
    ]);
    for (const event of events) expect(event.by).toBe(by);
    const [acquired, requeued, deadLettered, ghosts, lost] = events;
    expect(JSON.parse(acquired?.detail ?? "")).toEqual({ fencingToken: 1 });
    expect(requeued).toMatchObject({ group: "workers", count: "3", ids: "" });
    expect(deadLettered).toMatchObject({ group: "workers", count: "3" });
    expect(JSON.parse(deadLettered?.detail ?? "")).toMatchObject({ action: 3, maxDeliveries: 0 });
    expect(ghosts).toMatchObject({ group: "workers", count: "1", ids: deadIds[0] });
    expect(JSON.parse(lost?.detail ?? "")).toEqual({ reason: "stopped", fencingToken: 1 });
    const written = await registry.getSingleMetric("stream_janitor_events_total")?.get();
    expect(written?.values.find(({ labels }) => labels.type === "requeued")?.value).toBe(1);
  });
});
