import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { eventsIn } from "../support/eventsIn.js";
import { useJanitorFactory } from "./janitorHarness.js";
import { waitFor } from "../support/waitFor.js";
import { groupConfig } from "../support/sweepHarness.js";

const fixture = useRedisServer();
const janitorFor = useJanitorFactory(fixture);

describe("advisory events of the leader", () => {
  it("writes lease-acquired, one event per action per group that did anything, ghosts with ids, and lease-lost", async () => {
    const prefix = uniquePrefix("leader-events");
    const requeueStream = `${prefix}:requeue`;
    const deadStream = `${prefix}:dead`;
    const idleStream = `${prefix}:idle`;
    const requeueIds = await addStuckEntries(
      fixture.redis,
      requeueStream,
      "workers",
      numberedBodies(3),
    );
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
    const events = await eventsIn(fixture.redis, config.events.stream);
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
    expect(requeued).toMatchObject({ group: "workers", count: "3", ids: requeueIds.join(" ") });
    expect(deadLettered).toMatchObject({ group: "workers", count: "3" });
    expect(JSON.parse(deadLettered?.detail ?? "")).toMatchObject({ action: 3, maxDeliveries: 0 });
    expect(ghosts).toMatchObject({ group: "workers", count: "1", ids: deadIds[0] });
    expect(JSON.parse(lost?.detail ?? "")).toEqual({ reason: "stopped", fencingToken: 1 });
    const written = await registry.getSingleMetric("stream_janitor_events_total")?.get();
    expect(written?.values.find(({ labels }) => labels.type === "requeued")?.value).toBe(1);
  });
  it("writes consumers-reaped and trimmed after a maintenance pass that did something, nothing after one that did not", async () => {
    const prefix = uniquePrefix("maintenance-events");
    const stream = `${prefix}:trimmed`;
    // 20 entries every group is done with, 5 that the unconfigured group `legacy` holds, 5 more.
    for (let i = 0; i < 20; i += 1) await fixture.redis.xadd(stream, "*", "n", String(i));
    const held = await addStuckEntries(fixture.redis, stream, "legacy", numberedBodies(5));
    for (let i = 0; i < 5; i += 1) await fixture.redis.xadd(stream, "*", "n", String(i));
    await fixture.redis.call("XREADGROUP", "GROUP", "legacy", "live", "STREAMS", stream, ">");
    await fixture.redis.call("XACK", stream, "legacy", ...(await tailIds(stream, 5)));
    await fixture.redis.xgroup("CREATE", stream, "workers", "$");
    for (const name of ["gone-1", "gone-2"])
      await fixture.redis.xgroup("CREATECONSUMER", stream, "workers", name);
    const retention = [{ stream, maxLen: 3, maxAgeMs: 0 }];
    const { config, janitor } = janitorFor(prefix, { retention });
    const { supervisor } = janitor.createSweepWork(config, [
      groupConfig(stream, { action: "monitor", reapConsumersIdleMs: 1 }),
    ]);
    await waitFor(async () => {
      // Consumers created a moment ago must be idle for reapConsumersIdleMs (1 ms) first.
      const info = (await fixture.redis.call(
        "XINFO",
        "CONSUMERS",
        stream,
        "workers",
      )) as unknown[][];
      return info.every((c) => Number(c[c.indexOf("idle") + 1]) >= 1);
    });

    await janitor.lease.tryAcquireOnce();
    await supervisor.supervise();
    // Nothing left to reap, and legacy still holds the rest back: nothing more to tell.
    await supervisor.supervise();
    await supervisor.stop();
    await janitor.events.settled();

    const events = (await eventsIn(fixture.redis, config.events.stream)).filter(
      ({ type }) => type !== "lease-acquired",
    );
    expect(events.map(({ type }) => type)).toEqual(["consumers-reaped", "trimmed"]);
    const [reaped, trimmed] = events;
    expect(reaped).toMatchObject({ stream, group: "workers", count: "2", ids: "gone-1 gone-2" });
    expect(JSON.parse(reaped?.detail ?? "")).toEqual({
      consumers: ["gone-1", "gone-2"],
      idleMs: 1,
    });
    expect(trimmed).toMatchObject({ stream, group: "", count: "20", ids: "" });
    expect(JSON.parse(trimmed?.detail ?? "")).toEqual({
      maxLen: 3,
      maxAgeMs: 0,
      length: 10,
      heldBackBy: [{ group: "legacy", neededFromId: held[0] }],
    });
  });
});

/** The ids of the last `count` entries of a stream, oldest first. */
async function tailIds(stream: string, count: number): Promise<string[]> {
  const entries = await fixture.redis.xrevrange(stream, "+", "-", "COUNT", count);
  return entries.map(([id]) => id).reverse();
}
