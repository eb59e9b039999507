import { pino } from "pino";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { recordSweepMetrics } from "../../src/daemon/recordSweep.js";
import { Supervisor } from "../../src/daemon/Supervisor.js";
import type { LeaderTerm } from "../../src/lease/types.js";
import { createJanitorMetrics } from "../../src/metrics/janitorMetrics.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { GroupSet } from "../../src/core/GroupSet.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";

const fixture = useRedisServer();
const silent = pino({ level: "silent" });

function supervisorOf(groups: GroupSet, term: LeaderTerm) {
  return new Supervisor({
    groups,
    redis: registerScripts(fixture.redis),
    logger: silent,
    intervalMs: 60_000,
    batchSize: 100,
    maxScriptMs: 2,
    maxEntriesPerGroup: 100_000,
    consumerName: "stream-janitor",
    currentTerm: () => term,
  });
}

describe("Supervisor outcomes", () => {
  it("emits group-swept, group-failed, group-changed and pass-finished; metrics subscribe", async () => {
    const prefix = uniquePrefix("events");
    const stream = `${prefix}:ok`;
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(5));
    await fixture.redis.set(`${prefix}:lease`, "me");
    const term: LeaderTerm = {
      signal: new AbortController().signal,
      fence: { key: `${prefix}:lease`, value: "me" },
      fencingToken: 1,
    };
    const groups = new GroupSet([groupConfig(stream), groupConfig(`${prefix}:absent`)]);
    const supervisor = supervisorOf(groups, term);
    const metrics = createJanitorMetrics(new Registry(), "test");
    recordSweepMetrics(supervisor, metrics, silent);
    const seen: string[] = [];
    supervisor.on("group-swept", (result) => seen.push(`swept ${result.stream}`));
    supervisor.on("group-failed", (result) => seen.push(`failed ${result.stream}`));
    supervisor.on("group-changed", (groupId) => seen.push(`changed ${groupId}`));
    supervisor.on("pass-finished", (results) => seen.push(`finished ${results.length}`));

    await supervisor.supervise();

    expect(seen).toEqual([
      `swept ${stream}`,
      `changed ${stream}/workers`,
      `failed ${prefix}:absent`,
      "finished 2",
    ]);
    const claimed = await metrics.claimedEntries.get();
    expect(claimed.values.find((v) => v.labels.stream === stream)?.value).toBe(5);
    const failures = await metrics.sweepFailures.get();
    expect(failures.values.map((v) => v.labels.stream)).toEqual([`${prefix}:absent`]);

    // A removed group loses its series through the same subscription.
    const removed = new Promise((resolve) => supervisor.once("groups-changed", resolve));
    groups.replace([groupConfig(stream)]);
    await removed;
    await new Promise((resolve) => setImmediate(resolve));
    const sweeps = await metrics.sweeps.get();
    expect(sweeps.values.map((v) => v.labels.stream)).toEqual([stream]);
    await supervisor.stop();
  });

  it("a listener that throws does not break the pass", async () => {
    const stream = uniquePrefix("bad-listener");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(2));
    await fixture.redis.set(`${stream}:lease`, "me");
    const term: LeaderTerm = {
      signal: new AbortController().signal,
      fence: { key: `${stream}:lease`, value: "me" },
      fencingToken: 1,
    };
    const supervisor = supervisorOf(new GroupSet([groupConfig(stream)]), term);
    supervisor.on("group-swept", () => {
      throw new Error("listener bug");
    });
    const [result] = (await supervisor.supervise()) ?? [];
    expect(result).toMatchObject({ claimed: 2 });
    await supervisor.stop();
  });
});
