import { describe, expect, it } from "vitest";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { useJanitorFactory } from "./janitorHarness.js";
import { groupConfig } from "../support/sweepHarness.js";

const fixture = useRedisServer();
const janitorFor = useJanitorFactory(fixture);

describe("advisory events of a sweep: the ids of what each action handled", () => {
  it("requeued, reassigned and dead-lettered carry up to 20 ids each, the first in PEL order", async () => {
    const prefix = uniquePrefix("event-ids");
    const requeueStream = `${prefix}:requeue`;
    const reassignStream = `${prefix}:reassign`;
    const deadStream = `${prefix}:dead`;
    const requeueIds = await addStuckEntries(
      fixture.redis,
      requeueStream,
      "workers",
      numberedBodies(3),
    );
    const reassignIds = await addStuckEntries(
      fixture.redis,
      reassignStream,
      "workers",
      numberedBodies(4),
    );
    // A live consumer (it polls its own, empty, PEL) for reassign to hand the entries to.
    await fixture.redis.call(
      "XREADGROUP",
      "GROUP",
      "workers",
      "alive",
      "STREAMS",
      reassignStream,
      "0",
    );
    const deadIds = await addStuckEntries(fixture.redis, deadStream, "workers", numberedBodies(25));
    const { config, janitor } = janitorFor(prefix);
    const { supervisor } = janitor.createSweepWork(config, [
      groupConfig(requeueStream),
      groupConfig(reassignStream, { action: "reassign", minIdleMs: 60_000 }),
      groupConfig(deadStream, { action: "dead-letter" }),
    ]);

    await janitor.lease.tryAcquireOnce();
    await supervisor.supervise();
    await supervisor.stop();
    await janitor.events.settled();

    const entries = await fixture.redis.xrange(config.events.stream, "-", "+");
    const events = entries.map(([, fields]) => {
      const record = new Map<string, string>();
      for (let i = 0; i + 1 < fields.length; i += 2)
        record.set(fields[i] ?? "", fields[i + 1] ?? "");
      return record;
    });
    const of = (type: string) => events.find((event) => event.get("type") === type);
    expect(of("requeued")?.get("count")).toBe("3");
    expect(of("requeued")?.get("ids")).toBe(requeueIds.join(" "));
    expect(of("reassigned")?.get("count")).toBe("4");
    expect(of("reassigned")?.get("ids")).toBe(reassignIds.join(" "));
    expect(of("dead-lettered")?.get("count")).toBe("25");
    expect(of("dead-lettered")?.get("ids")).toBe(deadIds.slice(0, 20).join(" "));
    expect(JSON.parse(of("dead-lettered")?.get("detail") ?? "")).toEqual({
      maxDeliveries: 0,
      action: 25,
      maxIdle: 0,
    });
  });
});
