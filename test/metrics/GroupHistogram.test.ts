import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { GroupHistogram } from "../../src/metrics/GroupHistogram.js";

const BUCKETS = [0.001, 0.01, 0.1, 1];
const OBSERVED: [Record<"stream" | "group", string>, number][] = [
  [{ stream: "orders", group: "billing" }, 0.0004],
  [{ stream: "orders", group: "billing" }, 0.05],
  [{ stream: 'a\\b"c\nd', group: "g,=}{" }, 7],
  [{ stream: "orders", group: "billing" }, 0.01],
];

describe("GroupHistogram", () => {
  it("writes what prom-client's Histogram writes, in pieces that join to the whole", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const options = { name: "h_seconds", help: "a\\help\nline", labelNames: ["stream", "group"] };
    const compact = new GroupHistogram({ ...options, buckets: BUCKETS, registry: ours });
    const reference = new Histogram({ ...options, buckets: BUCKETS, registers: [theirs] });
    for (const [labels, value] of OBSERVED) {
      compact.observe(labels, value);
      reference.observe(labels, value);
    }
    const expected = await theirs.metrics();
    expect(await ours.metrics()).toBe(expected);
    expect(`${[...compact.pieces(1)].join("")}\n`).toBe(expected);
    expect(expected).toContain('h_seconds_bucket{le="0.01",stream="orders",group="billing"} 2\n');
    const essentials = (values: { labels: object; value: number; metricName?: string }[]) =>
      values.map(({ labels, value, metricName }) => ({ labels: { ...labels }, value, metricName }));
    const [mine, prom] = [await compact.get(), await reference.get()];
    expect({ ...mine, values: essentials(mine.values) }).toEqual({
      ...prom,
      values: essentials(prom.values),
    });
  });

  it("forgets the series of a removed group", async () => {
    const compact = new GroupHistogram({
      name: "h",
      help: "h",
      labelNames: ["stream", "group"],
      buckets: BUCKETS,
      registry: new Registry(),
    });
    compact.observe({ stream: "a", group: "g" }, 1);
    compact.observe({ stream: "b", group: "g" }, 1);
    compact.remove({ stream: "a", group: "g" });
    const streams = (await compact.get()).values.map(({ labels }) => labels.stream);
    expect(new Set(streams)).toEqual(new Set(["b"]));
    expect([...compact.pieces()].join("")).not.toContain('stream="a"');
  });
});
