import { spawn } from "node:child_process";
import { once } from "node:events";
import { afterAll, describe, expect, it } from "vitest";
import { LeaseLostError, type LeaderTerm } from "../../src/lease/types.js";
import { sweepAll } from "../../src/sweep/sweepAll.js";
import { sweepOnce } from "../../src/sweep/sweepOnce.js";
import { writeConfigFile } from "../support/daemonProcess.js";
import { addStuckEntries, numberedBodies } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { captureLogger, groupConfig, sweepContext } from "../support/sweepHarness.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";
import { useSweepWork } from "../daemon/janitorHarness.js";

const fixture = useRedisServer();
const sweepWork = useSweepWork(fixture);
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  await Promise.all(cleanups.map((cleanup) => cleanup()));
});

describe("a graceful stop is not a failure", () => {
  it("reports groups not reached as interrupted, without an error", async () => {
    const prefix = uniquePrefix("skipped");
    const controller = new AbortController();
    controller.abort();
    const results = await sweepAll(
      [groupConfig(`${prefix}:a`), groupConfig(`${prefix}:b`)],
      sweepContext(fixture.redis),
      controller.signal,
    );
    expect(results.map((r) => [r.interrupted, r.error, r.errorKind])).toEqual([
      [true, undefined, undefined],
      [true, undefined, undefined],
    ]);
  });

  it("counts nothing as failed when a pass is stopped half-way", async () => {
    const prefix = uniquePrefix("stopped");
    const first = `${prefix}:first`;
    await addStuckEntries(fixture.redis, first, "workers", numberedBodies(50));
    await fixture.redis.set(`${prefix}:lease`, "me");
    const controller = new AbortController();
    let fenceReads = 0;
    const term: LeaderTerm = {
      signal: controller.signal,
      fencingToken: 1,
      // The stop arrives while the first group is being swept (after its first page).
      get fence() {
        fenceReads += 1;
        if (fenceReads === 2) controller.abort();
        return { key: `${prefix}:lease`, value: "me" };
      },
    };
    const groups = [groupConfig(first), groupConfig(`${prefix}:second`)];
    const { supervisor, registry } = sweepWork(prefix, groups, { sweep: { batchSize: 10 } });

    const results = (await supervisor.supervise(term)) ?? [];

    expect(results.map((r) => [r.interrupted, r.complete, r.error])).toEqual([
      [true, false, undefined],
      [true, false, undefined],
    ]);
    expect(results[0]?.pages).toBeGreaterThan(0);
    const failures = await registry.getSingleMetric("stream_janitor_sweep_failures_total")?.get();
    expect(failures?.values.filter((sample) => sample.value > 0)).toEqual([]);
  });

  it.each([
    ["a stop", () => new LeaseLostError("stopped"), "group sweep interrupted by a stop"],
    ["a stop request", () => undefined, "group sweep interrupted by a stop"],
    [
      "a lease taken",
      () => new LeaseLostError("lease-taken"),
      "group sweep interrupted: lease lost",
    ],
    [
      "a renew deadline",
      () => new LeaseLostError("renew-deadline"),
      "group sweep interrupted: lease lost",
    ],
  ])("logs a sweep ended by %s as such", async (_cause, reason, message) => {
    const prefix = uniquePrefix("cause");
    const stream = `${prefix}:stream`;
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(30));
    await fixture.redis.set(`${prefix}:lease`, "me");
    const controller = new AbortController();
    let fenceReads = 0;
    const { logger, lines } = captureLogger();
    const result = await sweepOnce(
      groupConfig(stream),
      {
        ...sweepContext(fixture.redis, { logger, batchSize: 10 }),
        // The term ends after the first page.
        fence: () => {
          fenceReads += 1;
          if (fenceReads === 2) controller.abort(reason());
          return { key: `${prefix}:lease`, value: "me" };
        },
      },
      controller.signal,
    );
    expect(result).toMatchObject({ interrupted: true, complete: false });
    const line = lines.find((l) => String(l.msg).startsWith("group sweep interrupted"));
    expect(line).toMatchObject({ msg: message, level: message.includes("lease") ? 40 : 30 });
  });

  it("lets an interrupted one-shot `sweep` exit 143 (SIGTERM) with the groups marked interrupted", async () => {
    const prefix = uniquePrefix("cli-stop");
    const stream = `${prefix}:stream`;
    await addStuckEntries(fixture.redis, stream, "workers", numberedBodies(5_000));
    const config = testConfig(fixture.server.url, prefix, [{ minIdleMs: 1 }], {
      sweep: {
        intervalMs: 100,
        batchSize: 1,
        maxScriptMs: 2,
        maxEntriesPerGroup: 1_000_000,
        consumerName: "stream-janitor",
      },
    });
    const file = await writeConfigFile(config);
    cleanups.push(file.remove);
    const cli = new URL("../../dist/cli.js", import.meta.url).pathname;
    const child = spawn(process.execPath, [cli, "sweep", "--config", file.path, "--json"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = once(child, "exit");

    const pendingCount = async (): Promise<number> =>
      ((await fixture.redis.xpending(stream, "workers")) as [number])[0];
    await waitFor(async () => (await pendingCount()) < 4_990, {
      what: `the sweep to be under way (${stderr})`,
    });
    child.kill("SIGTERM");
    const [code] = (await exited) as [number | null];

    // Contract section 2: an interrupted command exits 130 (SIGINT) or 143 (SIGTERM).
    expect(code).toBe(143);
    const summary = JSON.parse(stdout) as { groups: Record<string, unknown>[] };
    expect(summary.groups[0]).toMatchObject({ complete: false, interrupted: true });
    expect(summary.groups[0]).not.toHaveProperty("error");
    expect(await pendingCount()).toBeGreaterThan(0);
  });
});
