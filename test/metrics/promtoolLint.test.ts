// Lints the exposition with `promtool check metrics` (naming, units, HELP, types). promtool is
// required (Debian: `apt-get install prometheus`); set PROMTOOL to use one that is not on PATH.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { recordSweep } from "../../src/daemon/recordSweep.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { groupConfig } from "../support/sweepHarness.js";
import { createTestRefresher } from "./refresherHarness.js";

const PROMTOOL = process.env.PROMTOOL ?? "promtool";

const fixture = useRedisServer();

async function promtoolCheckMetrics(
  exposition: string,
): Promise<{ code: number | null; output: string }> {
  const child = spawn(PROMTOOL, ["check", "metrics"], { stdio: ["pipe", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, "close") as Promise<[number | null]>;
  child.stdin.end(exposition);
  const [code] = await exited;
  return { code, output };
}

describe("the metrics exposition", () => {
  it("passes promtool check metrics with every family populated", async () => {
    const stream = uniquePrefix("lint");
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(3), { deliveries: 2 });
    const { refresher, metrics, registry } = createTestRefresher(
      fixture.redis,
      // With a retry lane, so that its length gauge is populated too.
      [groupConfig(stream, { retryLane: true })],
      {
        perConsumer: true,
      },
    );
    await refresher.scanOnce(new AbortController().signal);
    await refresher.refresh();
    recordSweep(
      metrics,
      {
        stream,
        group: "workers",
        claimed: 3,
        requeued: 2,
        reassigned: 0,
        deadLettered: 1,
        deadLetteredMaxDeliveries: 1,
        deadLetteredAction: 0,
        deadLetteredMaxIdle: 0,
        deadLettersDropped: 1,
        leftPending: 0,
        claimedFromActiveConsumer: 1,
        ghosts: 1,
        ghostIds: [],
        oversizedIds: [],
        invalidDeliveryCounts: 0,
        invalidDeliveryCountIds: [],
        requeuedIds: [],
        reassignedIds: [],
        deadLetteredIds: [],
        examined: 4,
        pages: 1,
        windows: 1,
        longestCallMs: 1,
        complete: true,
        interrupted: false,
        durationMs: 3,
      },
      Date.now(),
    );
    metrics.sweepFailures.inc({ stream, group: "workers", kind: "redis" });
    const exposition = await registry.metrics();
    // Only the project's families: prom-client's default metrics fail the lint on their own.
    const families = [...exposition.matchAll(/^# TYPE (\S+)/gmu)].map((match) => match[1]);
    expect(families.length).toBeGreaterThan(20);
    expect(families.filter((name) => !name?.startsWith("stream_janitor_"))).toEqual([]);
    for (const name of families) {
      expect(exposition, `${name ?? ""} has a sample`).toMatch(new RegExp(`^${name ?? ""}`, "mu"));
    }

    const { code, output } = await promtoolCheckMetrics(exposition);
    expect(output).toBe("");
    expect(code).toBe(0);
  });
});
