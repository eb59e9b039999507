import { describe, expect, it } from "vitest";
import { reapConsumers } from "../../src/maintenance/reapConsumers.js";
import { registerScripts, type ScriptedRedis } from "../../src/scripts/scriptedRedis.js";
import { addStuckEntries, numberedBodies, pendingEntries } from "../support/fabricatePel.js";
import { scriptWithConsumersReply, type FakedInactive } from "../support/fakeConsumersReply.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";

const fixture = useRedisServer();

async function consumerNames(stream: string, group: string): Promise<string[]> {
  const reply = (await fixture.redis.call("XINFO", "CONSUMERS", stream, group)) as string[][];
  return reply.map((flat) => String(flat[flat.indexOf("name") + 1])).sort();
}

/** A consumer that exists and owns nothing. */
async function emptyConsumer(stream: string, group: string, name: string): Promise<void> {
  await fixture.redis.xgroup("CREATECONSUMER", stream, group, name);
}

/** Whether this server's XINFO CONSUMERS reports `inactive` (Redis 7.2+, Valkey), asked of it. */
async function consumersReportInactive(stream: string, group: string): Promise<boolean> {
  const reply = (await fixture.redis.call("XINFO", "CONSUMERS", stream, group)) as unknown[][];
  return reply.some((flat) => flat.includes("inactive"));
}

/** A client whose reapConsumers.lua sees XINFO CONSUMERS in another version's shape. */
function reaperSeeing(inactive: FakedInactive): ScriptedRedis {
  const redis = fixture.server.client();
  redis.defineCommand("sjReapConsumers", {
    lua: scriptWithConsumersReply("reapConsumers.lua", inactive),
  });
  return registerScripts(redis);
}

async function read(stream: string, group: string, name: string): Promise<void> {
  await fixture.redis.call("XREADGROUP", "GROUP", group, name, "COUNT", 1, "STREAMS", stream, ">");
}

describe("consumers reap", () => {
  it("deletes consumers that own nothing and were idle long enough, never the janitor's", async () => {
    const stream = uniquePrefix("reap");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3), {
      consumer: "busy",
    });
    for (const name of ["gone-1", "gone-2", "stream-janitor"])
      await emptyConsumer(stream, "workers", name);
    const redis = registerScripts(fixture.redis);
    const request = { stream, group: "workers", janitorConsumer: "stream-janitor" };

    // Just created: not idle for a minute yet.
    const young = await reapConsumers(redis, { ...request, idleMs: 60_000, dryRun: false });
    expect(young.reaped).toEqual([]);

    const dry = await reapConsumers(redis, { ...request, idleMs: 0, dryRun: true });
    expect(dry).toMatchObject({ reaped: ["gone-1", "gone-2"], keptWithPending: 1, dryRun: true });
    expect(await consumerNames(stream, "workers")).toEqual([
      "busy",
      "gone-1",
      "gone-2",
      "stream-janitor",
    ]);

    // `inactive` is used where the server reports it (7.2+, Valkey), `idle` on 7.0; each shape
    // on any server: the test below.
    const usedInactive = await consumersReportInactive(stream, "workers");
    const summary = await reapConsumers(redis, { ...request, idleMs: 0, dryRun: false });
    expect(summary).toMatchObject({
      reaped: ["gone-1", "gone-2"],
      keptWithPending: 1,
      usedInactive,
    });
    expect(await consumerNames(stream, "workers")).toEqual(["busy", "stream-janitor"]);
    expect(await pendingEntries(fixture.redis, stream, "workers")).toHaveLength(3);
  });

  it("judges by inactive where the server reports it (7.2+), by idle where it does not (7.0)", async () => {
    const stream = uniquePrefix("reap-shapes");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3), {
      consumer: "busy",
    });
    for (const name of ["stale", "poller", "stream-janitor"])
      await emptyConsumer(stream, "workers", name);
    // All were seen just now. On 7.2+, `stale` has read nothing for an hour (it polls an empty
    // stream) and `poller` has never read anything (inactive -1: judged by idle).
    const request = {
      stream,
      group: "workers",
      idleMs: 60_000,
      janitorConsumer: "stream-janitor",
      dryRun: true,
    };
    const faked72 = { stale: 3_600_000, poller: -1, "stream-janitor": 3_600_000, busy: 0 };

    expect(await reapConsumers(reaperSeeing(faked72), request)).toMatchObject({
      reaped: ["stale"],
      keptWithPending: 1,
      usedInactive: true,
    });
    expect(await reapConsumers(reaperSeeing("absent"), request)).toMatchObject({
      reaped: [],
      keptWithPending: 1,
      usedInactive: false,
    });
    expect(await consumerNames(stream, "workers")).toEqual([
      "busy",
      "poller",
      "stale",
      "stream-janitor",
    ]);
  });

  it("reports a missing group as an error and changes nothing", async () => {
    const stream = uniquePrefix("reap-nogroup");
    await fixture.redis.xadd(stream, "*", "n", "1");
    await expect(
      reapConsumers(registerScripts(fixture.redis), {
        stream,
        group: "nope",
        idleMs: 0,
        janitorConsumer: "",
        dryRun: false,
      }),
    ).rejects.toThrow(/NOGROUP/u);
  });

  it("a check-then-delete done in two steps loses the entries a consumer read in between", async () => {
    // The hazard the script exists for (redis/redis #11567), shown deterministically.
    const stream = uniquePrefix("reap-naive");
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    await emptyConsumer(stream, "workers", "worker");
    const [consumer] = (await fixture.redis.call(
      "XINFO",
      "CONSUMERS",
      stream,
      "workers",
    )) as unknown[][];
    expect(consumer?.[consumer.indexOf("pending") + 1]).toBe(0); // step 1: "owns nothing"
    await fixture.redis.xadd(stream, "*", "n", "1");
    await read(stream, "workers", "worker"); // the consumer reads in between
    await fixture.redis.xgroup("DELCONSUMER", stream, "workers", "worker"); // step 2
    expect(await pendingEntries(fixture.redis, stream, "workers")).toEqual([]); // lost
  });

  it("racing a consumer that reads: the consumer is either kept with its entries or deleted before it read", async () => {
    const stream = uniquePrefix("reap-race");
    await fixture.redis.xgroup("CREATE", stream, "workers", "$", "MKSTREAM");
    const reader = fixture.server.client();
    const redis = registerScripts(fixture.redis);
    // Many idle consumers make the script's check long; the reader's XREADGROUP is sent while the
    // script runs. Redis runs one or the other first, never one inside the other.
    const idle = Array.from({ length: 1000 }, (_, i) => `idle-${i}`);
    let keptWithEntries = 0;
    let deletedBeforeRead = 0;
    for (let round = 0; round < 10; round += 1) {
      const setup = fixture.redis.pipeline();
      for (const name of idle) setup.xgroup("CREATECONSUMER", stream, "workers", name);
      setup.xgroup("CREATECONSUMER", stream, "workers", "worker");
      setup.xadd(stream, "*", "round", String(round));
      await setup.exec();
      const [reaped, read] = await Promise.all([
        reapConsumers(redis, {
          stream,
          group: "workers",
          idleMs: 0,
          janitorConsumer: "",
          dryRun: false,
        }),
        reader.call(
          "XREADGROUP",
          "GROUP",
          "workers",
          "worker",
          "COUNT",
          10,
          "STREAMS",
          stream,
          ">",
        ) as Promise<[string, [string, string[]][]][] | null>,
      ]);
      const delivered = read?.[0]?.[1].map(([id]) => id) ?? [];
      expect(delivered).toHaveLength(1);
      const pending = await pendingEntries(fixture.redis, stream, "workers");
      // Never lost: the entry the worker read is pending, owned by the worker.
      expect(pending.map((entry) => [entry.id, entry.consumer])).toEqual([
        [delivered[0], "worker"],
      ]);
      if (reaped.reaped.includes("worker")) deletedBeforeRead += 1;
      else keptWithEntries += 1;
      await fixture.redis.xack(stream, "workers", ...delivered);
    }
    expect(keptWithEntries + deletedBeforeRead).toBe(10);
  });
});
