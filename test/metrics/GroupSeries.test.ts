import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { GroupCounter } from "../../src/metrics/GroupCounter.js";
import { GroupGauge } from "../../src/metrics/GroupGauge.js";
import { LabelTexts } from "../../src/metrics/LabelTexts.js";

const GROUP = ["stream", "group"] as const;

function gauge(texts?: LabelTexts<"stream" | "group">): GroupGauge<"stream" | "group"> {
  return new GroupGauge({
    name: "g",
    help: "h",
    labelNames: GROUP,
    registry: new Registry(),
    labelTexts: texts,
  });
}

const values = async (metric: GroupGauge<string> | GroupCounter<string>) =>
  (await metric.get()).values.map(({ labels, value }) => [{ ...labels }, value]);

describe("GroupGauge", () => {
  it("exports only what was set since the last reset, and keeps one series per label set", async () => {
    const g = gauge();
    const a = { stream: "a", group: "x" };
    g.set(a, 1);
    g.set({ group: "x", stream: "a" }, 2);
    g.set({ stream: "b", group: "x" }, 3);
    expect(await values(g)).toEqual([
      [{ stream: "a", group: "x" }, 2],
      [{ stream: "b", group: "x" }, 3],
    ]);
    expect(g.render()).toBe(
      '# HELP g h\n# TYPE g gauge\ng{stream="a",group="x"} 2\ng{stream="b",group="x"} 3',
    );
    g.reset();
    expect(await values(g)).toEqual([]);
    expect(g.render()).toBe("# HELP g h\n# TYPE g gauge");
    g.set(a, 4);
    g.reset();
    g.reset();
    g.set({ stream: "b", group: "x" }, 5);
    expect(await values(g)).toEqual([[{ stream: "b", group: "x" }, 5]]);
  });

  it("shares the label text of a labels object between families, and refuses a missing label", () => {
    const texts = new LabelTexts(GROUP);
    const [one, two] = [gauge(texts), gauge(texts)];
    const labels = { stream: 'q"\\\n', group: "x" };
    one.set(labels, 1);
    two.set(labels, 2);
    expect(texts.of(labels)).toBe('{stream="q\\"\\\\\\n",group="x"}');
    expect(two.render()).toContain('g{stream="q\\"\\\\\\n",group="x"} 2');
    expect(() => one.set({ stream: "a" } as never, 1)).toThrow(/g: label group is missing/u);
  });
});

describe("GroupCounter", () => {
  it("adds up, removes a series, and never goes down", async () => {
    const c = new GroupCounter({
      name: "c_total",
      help: "h",
      labelNames: GROUP,
      registry: new Registry(),
    });
    const a = { stream: "a", group: "x" };
    c.inc(a, 0);
    c.inc(a);
    c.inc({ stream: "a", group: "x" }, 2);
    c.inc({ stream: "b", group: "x" }, 5);
    expect(await values(c)).toEqual([
      [{ stream: "a", group: "x" }, 3],
      [{ stream: "b", group: "x" }, 5],
    ]);
    c.remove({ stream: "b", group: "x" });
    expect(c.render()).toBe(
      '# HELP c_total h\n# TYPE c_total counter\nc_total{stream="a",group="x"} 3',
    );
    expect(() => c.inc(a, -1)).toThrow(/only grows/u);
    expect(() => c.inc(a, Number.NaN)).toThrow(/only grows/u);
  });
});

describe("LabelTexts", () => {
  it("keeps one text of a group's pairs for every family, labels object and extra label", () => {
    const group = new LabelTexts(GROUP);
    const byStatus = new LabelTexts([...GROUP, "status"] as const);
    const perGroup = group.series({ stream: "orders", group: "billing" });
    const again = new LabelTexts(GROUP).series({ stream: "orders", group: "billing" });
    const ok = byStatus.series({ stream: "orders", group: "billing", status: "ok" });
    const stuck = byStatus.series({ stream: "orders", group: "billing", status: "stuck" });
    expect(again.head).toBe(perGroup.head);
    expect(ok.head).toBe(perGroup.head);
    expect(stuck.head).toBe(perGroup.head);
    expect(ok.head.text).toBe('stream="orders",group="billing"');
    expect([ok.tail.text, stuck.tail.text]).toEqual([',status="ok"', ',status="stuck"']);
    expect(again.key).toBe(perGroup.key);
    expect(ok.key).not.toBe(stuck.key);
    expect(byStatus.of({ stream: "orders", group: "billing", status: "ok" })).toBe(
      '{stream="orders",group="billing",status="ok"}',
    );
  });
});
