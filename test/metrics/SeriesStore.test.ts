import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { ExpositionWriter } from "../../src/metrics/ExpositionWriter.js";
import { GroupCounter } from "../../src/metrics/GroupCounter.js";
import { GroupGauge } from "../../src/metrics/GroupGauge.js";
import { Interned, LabelTexts } from "../../src/metrics/LabelTexts.js";
import { ColumnStore, MapStore, type SeriesStore } from "../../src/metrics/SeriesStore.js";

const GROUP = ["stream", "group"] as const;
const texts = new LabelTexts([...GROUP, "reason"] as const);
const text = (stream: string, reason: string) => texts.series({ stream, group: "g", reason });

function lines(store: SeriesStore, mark = 0): string[] {
  const seen: string[] = [];
  store.forEach(
    mark,
    (head, tail, value) => seen.push(`${head.text}${tail.text} ${value}`),
    0,
    store.span(),
  );
  return seen;
}

describe.each([
  ["ColumnStore", () => new ColumnStore()],
  ["MapStore", () => new MapStore()],
])("%s", (_name, make) => {
  it("sets, adds, drops stale marks and deletes, series by series", () => {
    const store = make();
    const [a, b] = [text("sa", "x"), text("sb", "y")];
    store.write(a.head, a.tail, 2, 1, false);
    store.write(a.head, a.tail, 3, 1, true);
    store.write(b.head, b.tail, 7, 0, false);
    expect(lines(store)).toEqual([
      'stream="sa",group="g",reason="x" 5',
      'stream="sb",group="g",reason="y" 7',
    ]);
    // Marked below 1: kept, not exported, until dropBelow forgets it for good.
    expect(lines(store, 1)).toEqual(['stream="sa",group="g",reason="x" 5']);
    store.dropBelow(1);
    expect(lines(store)).toEqual(['stream="sa",group="g",reason="x" 5']);
    store.write(b.head, b.tail, 1, 0, true);
    expect(lines(store)).toContain('stream="sb",group="g",reason="y" 1');
    store.delete(a.head, a.tail);
    expect(lines(store)).toEqual(['stream="sb",group="g",reason="y" 1']);
    store.clear();
    expect(lines(store)).toEqual([]);
  });
});

describe("ColumnStore", () => {
  it("walks rows in spans that together give every series once", () => {
    const store = new ColumnStore();
    const many = Array.from({ length: 300 }, (_, i) => text(`span-${i}`, i % 2 === 0 ? "x" : "y"));
    for (const [i, { head, tail }] of many.entries()) store.write(head, tail, i, 0, false);
    const walked: number[] = [];
    for (let from = 0; from < store.span(); from += 7) {
      store.forEach(0, (_head, _tail, value) => walked.push(value), from, from + 7);
    }
    expect(walked.sort((p, q) => p - q)).toEqual(many.map((_, i) => i));
  });

  it("gives a row whose group went away to the next group, starting from nothing", () => {
    // The pool frees a row once its piece is collected; two pieces of one row stand for that.
    const store = new ColumnStore();
    const tail = new Interned("", [], 1);
    const gone = new Interned('stream="gone"', ["gone"], 5);
    const next = new Interned('stream="next"', ["next"], 5);
    store.write(gone, tail, 41, 0, true);
    store.delete(gone, tail);
    store.write(next, tail, 1, 0, true);
    expect(lines(store)).toEqual(['stream="next" 1']);
  });
});

describe("GroupGauge.setWith and GroupCounter.incWith", () => {
  it("write the same series as a labels object with the extra label would", async () => {
    const registry = new Registry();
    const labelNames = [...GROUP, "status"] as const;
    const shared = new LabelTexts(labelNames);
    const options = { help: "h", labelNames, registry, labelTexts: shared };
    const gauge = new GroupGauge({ ...options, name: "s" });
    const counter = new GroupCounter({ ...options, name: "c_total" });
    const group = { stream: "o", group: "b" };
    gauge.setWith(group, "OK", 1);
    gauge.set({ ...group, status: "OK" }, 2);
    gauge.setWith(group, "STUCK", 0);
    counter.incWith(group, "max-idle", 2);
    counter.inc({ stream: "o", group: "b", status: "max-idle" }, 3);
    expect(gauge.render()).toBe(
      '# HELP s h\n# TYPE s gauge\ns{stream="o",group="b",status="OK"} 2\ns{stream="o",group="b",status="STUCK"} 0',
    );
    expect((await counter.get()).values).toEqual([
      { labels: { ...group, status: "max-idle" }, value: 5 },
    ]);
    expect(() => counter.incWith(group, "x", -1)).toThrow(/only grows/u);
    const plain = new GroupGauge({ name: "p", help: "h", labelNames: GROUP, registry });
    expect(() => plain.setWith(group, "OK", 1)).toThrow(/p: seriesWith needs exactly one label/u);
  });
});

describe("ExpositionWriter", () => {
  it("hands on chunks that end at line ends, a line longer than a chunk included", () => {
    const writer = new ExpositionWriter();
    const close = Buffer.from("} ");
    const open = Buffer.from("m{");
    const long = Buffer.from(`stream="${"é".repeat(200_000)}"`);
    const chunks: Buffer[] = [];
    for (let i = 0; i < 20_000; i += 1) {
      writer.line(open, Buffer.from(`stream="s${i}"`), Buffer.alloc(0), close, i / 4);
      if (i === 10_000) writer.line(open, long, Buffer.alloc(0), close, Number.POSITIVE_INFINITY);
      chunks.push(...writer.full());
    }
    chunks.push(...writer.end());
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) expect(chunk.at(-1)).toBe(10);
    const text = chunks.map((chunk) => chunk.toString("utf8")).join("");
    expect(text.split("\n")).toHaveLength(20_002);
    expect(text).toContain('m{stream="s3"} 0.75\n');
    expect(text).toContain(`m{${long.toString()}} +Inf\nm{stream="s10001"} 2500.25\n`);
  });
});
