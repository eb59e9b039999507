import { pino } from "pino";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { Maintenance } from "../../src/maintenance/Maintenance.js";
import { Supervisor } from "../../src/daemon/Supervisor.js";
import type { LeaderTerm } from "../../src/lease/types.js";
import { createMaintenanceMetrics } from "../../src/metrics/maintenanceMetrics.js";
import { registerScripts } from "../../src/scripts/scriptedRedis.js";
import { DaemonProcess, writeConfigFile } from "../support/daemonProcess.js";
import { addStuckEntries, numberedBodies, pendingEntries } from "../support/fabricatePel.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { captureLogger, groupConfig } from "../support/sweepHarness.js";
import { testConfig } from "../support/testConfig.js";
import { waitFor } from "../support/waitFor.js";

const fixture = useRedisServer();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function heldTerm(key: string): Promise<LeaderTerm> {
  await fixture.redis.set(key, "me");
  return { signal: new AbortController().signal, fence: { key, value: "me" }, fencingToken: 1 };
}

async function addEntries(stream: string, count: number): Promise<string[]> {
  const pipeline = fixture.redis.pipeline();
  for (let i = 0; i < count; i += 1) pipeline.xadd(stream, "*", "n", String(i));
  return ((await pipeline.exec()) ?? []).map(([, id]) => String(id));
}

/**
 * 20 entries everybody processed, then 5 that an unconfigured group `legacy` still holds, then
 * 5 more; the configured group `workers` (monitor: the sweep touches nothing) has two consumers
 * that own nothing.
 */
async function retentionState(stream: string) {
  await addEntries(stream, 20);
  const held = await addStuckEntries(fixture.redis, stream, "legacy", numberedBodies(5));
  const tail = await addEntries(stream, 5);
  await fixture.redis.call("XREADGROUP", "GROUP", "legacy", "live", "STREAMS", stream, ">");
  await fixture.redis.xack(stream, "legacy", ...tail);
  await fixture.redis.xgroup("CREATE", stream, "workers", "$");
  for (const name of ["gone-1", "gone-2"])
    await fixture.redis.xgroup("CREATECONSUMER", stream, "workers", name);
  return held;
}

function leader(stream: string, term: LeaderTerm) {
  const registry = new Registry();
  const metrics = createMaintenanceMetrics(registry);
  const { logger, lines } = captureLogger();
  const group = groupConfig(stream, { action: "monitor", reapConsumersIdleMs: 1 });
  const maintenance = new Maintenance({
    redis: registerScripts(fixture.redis),
    logger,
    metrics,
    retention: [{ stream, maxLen: 3, maxAgeMs: 0 }],
    janitorConsumer: "stream-janitor",
    maxTrimmedPerPass: 100_000,
  });
  const supervisor = new Supervisor({
    groups: [group],
    redis: registerScripts(fixture.redis),
    logger: pino({ level: "silent" }),
    intervalMs: 60_000,
    batchSize: 100,
    maxScriptMs: 2,
    maxEntriesPerGroup: 100_000,
    consumerName: "stream-janitor",
    currentTerm: () => term,
    maintenance,
  });
  return { supervisor, metrics, lines };
}

async function value(
  metric: { get(): Promise<{ values: { labels: object; value: number }[] }> },
  labels: object,
) {
  const { values } = await metric.get();
  return values.find((v) => JSON.stringify(v.labels) === JSON.stringify(labels))?.value;
}

describe("daemon maintenance", () => {
  it("trims safely, says which group holds retention back, and reaps idle consumers", async () => {
    const stream = uniquePrefix("maintenance");
    const held = await retentionState(stream);
    const term = await heldTerm(`${stream}:lease`);
    const { supervisor, metrics, lines } = leader(stream, term);
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

    await supervisor.supervise(term);
    expect(await fixture.redis.xlen(stream)).toBe(10);
    expect(await value(metrics.trimmedEntries, { stream })).toBe(20);
    expect(await value(metrics.retentionBlocked, { stream, group: "legacy" })).toBe(1);
    // Every group of the stream has a sample, as the help text says: 0 for one not holding back.
    expect(await value(metrics.retentionBlocked, { stream, group: "workers" })).toBe(0);
    expect(await value(metrics.consumersReaped, { stream, group: "workers" })).toBe(2);
    expect(
      lines.find((l) => l.msg === "reaped consumers that owned nothing and were idle"),
    ).toMatchObject({
      stream,
      group: "workers",
      consumers: ["gone-1", "gone-2"],
    });
    expect(await pendingEntries(fixture.redis, stream, "legacy")).toHaveLength(5);

    // legacy catches up: retention proceeds and the gauge goes back to 0.
    await fixture.redis.xack(stream, "legacy", ...held);
    await supervisor.supervise(term);
    expect(await fixture.redis.xlen(stream)).toBe(3);
    expect(await value(metrics.trimmedEntries, { stream })).toBe(27);
    expect(await value(metrics.retentionBlocked, { stream, group: "legacy" })).toBe(0);
    expect(await value(metrics.retentionBlocked, { stream, group: "workers" })).toBe(0);

    // A group that is gone leaves the gauge (its series would otherwise stay at 0 for ever).
    await fixture.redis.xgroup("DESTROY", stream, "legacy");
    await supervisor.supervise(term);
    expect(await value(metrics.retentionBlocked, { stream, group: "legacy" })).toBeUndefined();
    expect(await value(metrics.retentionBlocked, { stream, group: "workers" })).toBe(0);
  });

  it("does nothing without the lease", async () => {
    const stream = uniquePrefix("maintenance-fenced");
    await retentionState(stream);
    const term = await heldTerm(`${stream}:lease`);
    await fixture.redis.set(`${stream}:lease`, "a newer leader");
    const { supervisor, metrics } = leader(stream, term);
    await supervisor.supervise(term);
    expect(await fixture.redis.xlen(stream)).toBe(30);
    expect(await value(metrics.trimmedEntries, { stream })).toBe(0);
  });

  it("exports the retention metrics from a running daemon", async () => {
    const prefix = uniquePrefix("maintenance-daemon");
    const stream = `${prefix}:stream`;
    await retentionState(stream);
    const config = testConfig(fixture.server.url, prefix, [{ action: "monitor" }], {
      retention: [{ stream, maxLen: 3, maxAgeMs: 0 }],
    });
    const file = await writeConfigFile(config);
    cleanups.push(file.remove);
    const daemon = await DaemonProcess.start(file.path);
    cleanups.push(() => daemon.kill());
    await waitFor(
      async () => (await daemon.metric("stream_janitor_trimmed_entries_total")) === 20,
      {
        what: "20 entries trimmed",
      },
    );
    const text = await (await fetch(`${daemon.httpUrl}/metrics`)).text();
    expect(text).toContain(`stream_janitor_retention_blocked{stream="${stream}",group="legacy"} 1`);
    expect(text).toContain(
      `stream_janitor_retention_blocked{stream="${stream}",group="workers"} 0`,
    );
    expect(await fixture.redis.xlen(stream)).toBe(10);
  });
});
