import { afterEach, describe, expect, it } from "vitest";
import type { RunningDaemon } from "../../src/daemon/startDaemon.js";
import { uniquePrefix, useRedisServer } from "../support/redisServer.js";
import { waitFor } from "../support/waitFor.js";
import {
  discoveryConfig,
  metricsText,
  pattern,
  pendingCount,
  sampleValue,
  startInProcess,
  stuck,
  warnLogger,
} from "./discoveryHarness.js";

const fixture = useRedisServer();
const running: RunningDaemon[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((daemon) => daemon.stop()));
});

async function start(...args: Parameters<typeof startInProcess>): Promise<RunningDaemon> {
  const daemon = await startInProcess(...args);
  running.push(daemon);
  return daemon;
}

const allSwept =
  (streams: readonly string[], group = "workers") =>
  async () => {
    for (const stream of streams) {
      if ((await pendingCount(fixture.redis, stream, group)) > 0) return false;
    }
    return true;
  };

describe("discovered groups are swept like listed ones", () => {
  it("sweeps 200 tenant streams from one pattern, and nothing outside it", async () => {
    const prefix = uniquePrefix("fleet");
    const tenants = Array.from({ length: 200 }, (_, i) => `${prefix}:tenant:${i}:events`);
    for (const stream of tenants) await stuck(fixture.redis, stream, "workers");
    const outside = `${prefix}:tenant:0:audit`;
    await stuck(fixture.redis, outside, "workers");

    const config = discoveryConfig(fixture.server.url, prefix, [
      pattern(`${prefix}:tenant:*:events`),
    ]);
    const daemon = await start(config);
    await waitFor(allSwept(tenants), { what: "200 tenant groups swept", timeoutMs: 30_000 });

    expect(await pendingCount(fixture.redis, outside, "workers")).toBe(3);
    const text = await metricsText(daemon);
    expect(sampleValue(text, "stream_janitor_discovered_groups")).toBe(200);
    const labels = { stream: tenants[199] as string, group: "workers" };
    expect(sampleValue(text, "stream_janitor_requeued_entries_total", labels)).toBe(3);
    expect(sampleValue(text, "stream_janitor_pending_entries", labels)).toBeDefined();
    expect(text).not.toContain(`stream="${outside}"`);
  });

  it("sweeps a stream created after start-up once discovery runs again", async () => {
    const prefix = uniquePrefix("late");
    const first = `${prefix}:t:1:events`;
    await stuck(fixture.redis, first, "workers");
    const daemon = await start(
      discoveryConfig(fixture.server.url, prefix, [pattern(`${prefix}:t:*:events`)]),
    );
    await waitFor(allSwept([first]), { what: "the first stream swept" });

    const late = `${prefix}:t:2:events`;
    await stuck(fixture.redis, late, "workers");
    // Without a scan the new stream is unknown to the daemon: still pending after sweeps of t:1.
    expect(sampleValue(await metricsText(daemon), "stream_janitor_discovered_groups")).toBe(1);
    await daemon.discoverOnce();
    expect(sampleValue(await metricsText(daemon), "stream_janitor_discovered_groups")).toBe(2);
    await waitFor(allSwept([late]), { what: "the late stream swept" });
  });

  it("removes a deleted stream's series from /metrics and stops sweeping it", async () => {
    const prefix = uniquePrefix("deleted");
    const kept = `${prefix}:t:kept`;
    const deleted = `${prefix}:t:gone`;
    await stuck(fixture.redis, kept, "workers");
    await stuck(fixture.redis, deleted, "workers");
    const daemon = await start(
      discoveryConfig(fixture.server.url, prefix, [pattern(`${prefix}:t:*`)]),
    );
    await waitFor(allSwept([kept, deleted]), { what: "both streams swept" });
    await waitFor(
      async () =>
        sampleValue(await metricsText(daemon), "stream_janitor_sweeps_total", {
          stream: deleted,
        }) !== undefined,
      { what: "the doomed stream's series" },
    );

    await fixture.redis.del(deleted);
    await daemon.discoverOnce();
    await waitFor(async () => !(await metricsText(daemon)).includes(`stream="${deleted}"`), {
      what: "every series of the deleted stream to leave /metrics",
    });
    const text = await metricsText(daemon);
    expect(sampleValue(text, "stream_janitor_discovered_groups")).toBe(1);
    expect(sampleValue(text, "stream_janitor_sweeps_total", { stream: kept })).toBeGreaterThan(0);
    // Sweeps go on without it: its series do not come back.
    const sweepsBefore = sampleValue(text, "stream_janitor_sweeps_total", { stream: kept }) ?? 0;
    await waitFor(
      async () =>
        (sampleValue(await metricsText(daemon), "stream_janitor_sweeps_total", {
          stream: kept,
        }) ?? 0) >
        sweepsBefore + 1,
      { what: "two more sweeps" },
    );
    expect(await metricsText(daemon)).not.toContain(`stream="${deleted}"`);
  });

  it("never takes dead-letter or requeue-target streams as sources, even when the pattern matches them", async () => {
    const prefix = uniquePrefix("outputs");
    // `*prefix*` matches the source, its default dead-letter stream `{source}:dead` and the
    // retry stream; both outputs have a group of their own with stuck entries.
    const source = `${prefix}:orders`;
    const deadLetters = `{${source}}:dead`;
    const retry = `${prefix}:retry`;
    const listedSource = `${prefix}:listed`;
    const listedDeadLetters = `${prefix}:listed-dlq`;
    await stuck(fixture.redis, source, "workers");
    await stuck(fixture.redis, deadLetters, "auditors");
    await stuck(fixture.redis, retry, "retriers");
    await stuck(fixture.redis, listedSource, "workers");
    await stuck(fixture.redis, listedDeadLetters, "auditors");
    const config = discoveryConfig(
      fixture.server.url,
      prefix,
      [
        pattern(`*${prefix}:orders*`, { action: "dead-letter" }),
        pattern(`${prefix}:*`, { requeueStream: retry, action: "dead-letter" }),
      ],
      {
        groups: [
          {
            stream: listedSource,
            group: "workers",
            minIdleMs: 1000,
            maxDeliveries: 5,
            action: "monitor",
            requeueStream: "",
            deadLetterStream: listedDeadLetters,
            deadLetterMaxLen: 1000,
          },
        ],
      },
    );
    const daemon = await start(config);
    await waitFor(allSwept([source]), { what: "the source swept" });
    const text = await metricsText(daemon);
    // Only the source: the dead-letter stream, the retry target and the listed group's dead
    // letters all match a pattern and are left alone.
    expect(sampleValue(text, "stream_janitor_discovered_groups")).toBe(1);
    expect(await pendingCount(fixture.redis, deadLetters, "auditors")).toBe(3);
    expect(await pendingCount(fixture.redis, retry, "retriers")).toBe(3);
    expect(await pendingCount(fixture.redis, listedDeadLetters, "auditors")).toBe(3);
    expect(await fixture.redis.xlen(deadLetters)).toBe(6);
    for (const output of [deadLetters, retry, listedDeadLetters]) {
      expect(text).not.toContain(`stream="${output}",group=`);
    }
  });

  it("lets a listed pair override the pattern's settings", async () => {
    const prefix = uniquePrefix("override");
    const listed = `${prefix}:t:1:events`;
    const neighbour = `${prefix}:t:2:events`;
    await stuck(fixture.redis, listed, "workers");
    await stuck(fixture.redis, neighbour, "workers");
    const config = discoveryConfig(fixture.server.url, prefix, [pattern(`${prefix}:t:*:events`)], {
      groups: [
        {
          stream: listed,
          group: "workers",
          minIdleMs: 1000,
          maxDeliveries: 5,
          action: "monitor",
          requeueStream: "",
          deadLetterStream: "",
          deadLetterMaxLen: 1000,
        },
      ],
    });
    const daemon = await start(config);
    await waitFor(allSwept([neighbour]), { what: "the neighbour swept" });
    const text = await metricsText(daemon);
    expect(sampleValue(text, "stream_janitor_discovered_groups")).toBe(1);
    // Monitored, as listed: its entries stay where they are, though it has its series.
    expect(await pendingCount(fixture.redis, listed, "workers")).toBe(3);
    expect(sampleValue(text, "stream_janitor_pending_entries", { stream: listed })).toBe(3);
    expect(
      text
        .split("\n")
        .filter(
          (line) =>
            line.startsWith("stream_janitor_sweeps_total{") && line.includes(`stream="${listed}"`),
        ),
    ).toHaveLength(1);
  });

  it("refuses a discovered stream read by several groups for requeue, counts it, and sweeps its neighbours", async () => {
    const prefix = uniquePrefix("multi");
    const shared = `${prefix}:t:shared`;
    const neighbour = `${prefix}:t:alone`;
    await stuck(fixture.redis, shared, "workers");
    await stuck(fixture.redis, shared, "analytics");
    await stuck(fixture.redis, neighbour, "workers");
    const { logger, lines } = warnLogger();
    const daemon = await start(
      discoveryConfig(fixture.server.url, prefix, [pattern(`${prefix}:t:*`)]),
      logger,
    );
    await waitFor(allSwept([neighbour]), { what: "the neighbour swept" });
    await waitFor(
      async () =>
        (sampleValue(await metricsText(daemon), "stream_janitor_sweep_failures_total", {
          stream: shared,
          group: "workers",
          kind: "refused",
        }) ?? 0) > 0,
      { what: "the refusal counted" },
    );
    expect(await pendingCount(fixture.redis, shared, "workers")).toBe(3);
    expect(await pendingCount(fixture.redis, shared, "analytics")).toBe(3);
    const refusal = lines.find(
      (line) =>
        line.stream === shared &&
        line.group === "workers" &&
        String(line.error ?? line.msg).includes("refusing to requeue"),
    );
    expect(refusal).toBeDefined();
    expect(String(refusal?.error ?? refusal?.msg)).toContain("also read by group(s) analytics");
  });

  it("applies changed patterns on reload", async () => {
    const prefix = uniquePrefix("reload");
    const a = `${prefix}:a:1`;
    const b = `${prefix}:b:1`;
    await stuck(fixture.redis, a, "workers");
    await stuck(fixture.redis, b, "workers");
    const first = discoveryConfig(fixture.server.url, prefix, [
      pattern(`${prefix}:a:*`, { action: "monitor" }),
    ]);
    const daemon = await start(first);
    await waitFor(
      async () =>
        sampleValue(await metricsText(daemon), "stream_janitor_pending_entries", { stream: a }) ===
        3,
      { what: "the first pattern's group in /metrics" },
    );

    const second = discoveryConfig(fixture.server.url, prefix, [pattern(`${prefix}:b:*`)]);
    second.lease = first.lease;
    expect(await daemon.reload(() => Promise.resolve(second))).toBe(true);
    await daemon.discoverOnce();
    await waitFor(allSwept([b]), { what: "the newly matched stream swept" });
    await waitFor(async () => !(await metricsText(daemon)).includes(`stream="${a}"`), {
      what: "the no longer matched stream to leave /metrics",
    });
    expect(await pendingCount(fixture.redis, a, "workers")).toBe(3);
  });
});
