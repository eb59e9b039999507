import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { JanitorRegistry } from "../../src/metrics/JanitorRegistry.js";
import { createJanitorMetrics, type JanitorMetrics } from "../../src/metrics/janitorMetrics.js";

function fill(metrics: JanitorMetrics): void {
  const odd = { stream: 'a\\b"c\nd', group: "g,=}{" };
  const plain = { stream: "orders", group: "billing" };
  for (const labels of [plain, odd]) {
    metrics.pendingEntries.set(labels, 3);
    metrics.pendingMaxIdleSeconds.set(labels, 1.25);
    metrics.lagEntries.set(labels, Number.POSITIVE_INFINITY);
    metrics.lagSeconds.set(labels, Number.NaN);
    metrics.groupReadable.set(labels, 1);
    metrics.consumerPendingEntries.set({ ...labels, consumer: "c\\1" }, 2);
    metrics.claimedEntries.inc(labels, 4);
  }
  metrics.streamLengthEntries.set({ stream: "orders" }, 10);
  metrics.sweepDurationSeconds.observe(odd, 0.02);
  metrics.deadLetteredEntries.inc({ ...odd, reason: "action" }, 2);
  metrics.leader.set(1);
  metrics.lastSweepSuccessTimestampSeconds.set(plain, 1_700_000_000.5);
  metrics.pendingEntries.reset();
  metrics.pendingEntries.set(plain, 7);
}

describe("JanitorRegistry", () => {
  it("writes exactly what prom-client's Registry writes for the same metrics", async () => {
    const fast = new JanitorRegistry();
    const reference = new Registry();
    fill(createJanitorMetrics(fast, "1.2.3"));
    fill(createJanitorMetrics(reference, "1.2.3"));
    const text = await fast.metrics();
    expect(text).toBe(await reference.metrics());
    expect(text).toContain('stream_janitor_pending_entries{stream="orders",group="billing"} 7\n');
    expect(text).toContain(
      'stream_janitor_group_readable{stream="a\\\\b\\"c\\nd",group="g,=}{"} 1\n',
    );
    expect(text).toContain(
      'stream_janitor_claimed_entries_total{stream="a\\\\b\\"c\\nd",group="g,=}{"} 4\n',
    );
    expect(text).toContain("stream_janitor_leader 1\n");
    // Twice, and after counters moved: the cached label text gives the same answer.
    expect(await fast.metrics()).toBe(text);
    for (const registry of [fast, reference]) {
      const claimed = registry.getSingleMetric("stream_janitor_claimed_entries_total");
      (claimed as unknown as { inc(labels: object, value: number): void }).inc(
        { stream: "orders", group: "billing" },
        5,
      );
    }
    expect(await fast.metrics()).toBe(await reference.metrics());
  });
});

describe("JanitorRegistry.exposition", () => {
  it("gives the text of 4,000 groups in pieces of at most 512 KB that join to the whole", async () => {
    const fast = new JanitorRegistry();
    const reference = new Registry();
    for (const registry of [fast, reference]) {
      const metrics = createJanitorMetrics(registry, "1.2.3");
      for (let i = 0; i < 4_000; i += 1) {
        const labels = { stream: `t:${i}:ev`, group: "g" };
        metrics.pendingEntries.set(labels, i);
        metrics.claimedEntries.inc(labels, 0);
        metrics.sweepDurationSeconds.observe(labels, (i % 7) / 1000);
      }
    }
    const pieces: string[] = [];
    for await (const piece of fast.exposition()) pieces.push(piece);
    const largest = Math.max(...pieces.map((piece) => Buffer.byteLength(piece)));
    expect(largest).toBeLessThanOrEqual(512 * 1024);
    const text = pieces.join("");
    expect(text).toBe(await reference.metrics());
    expect(text).toContain(
      'stream_janitor_sweep_duration_seconds_bucket{le="0.005",stream="t:6:ev",group="g"} 0\n',
    );
  });
});
