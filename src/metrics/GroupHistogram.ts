import type { Registry } from "prom-client";
import { ExpositionWriter } from "./ExpositionWriter.js";
import { escapeHelp, LabelTexts, type Interned } from "./LabelTexts.js";
import type { Labels } from "./GroupSeries.js";

/**
 * The series of one tail of the family, one slot per group row (see SeriesStore): the bucket
 * counts (not cumulative; the last slot counts those above every bound), sum and count.
 */
class HistogramColumn {
  heads: (Interned | undefined)[] = [];
  counts = new Float64Array(0);
  sums = new Float64Array(0);
  totals = new Float64Array(0);

  constructor(
    readonly tail: Interned,
    private readonly slots: number,
  ) {}

  /** Clears the row's slots when a series starts there (rows are reused). */
  start(head: Interned): void {
    const { row } = head;
    if (row >= this.sums.length) this.grow(row);
    if (this.heads[row] === head) return;
    this.heads[row] = head;
    this.counts.fill(0, row * this.slots, (row + 1) * this.slots);
    this.sums[row] = 0;
    this.totals[row] = 0;
  }

  private grow(row: number): void {
    let size = Math.max(64, this.sums.length * 2);
    while (size <= row) size *= 2;
    const counts = new Float64Array(size * this.slots);
    counts.set(this.counts);
    const sums = new Float64Array(size);
    sums.set(this.sums);
    const totals = new Float64Array(size);
    totals.set(this.totals);
    Object.assign(this, { counts, sums, totals });
  }
}

interface PromValue {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName: string;
}

interface HistogramFamily {
  name: string;
  help: string;
  type: "histogram";
  aggregator: "sum";
  values: PromValue[];
}

export interface GroupHistogramOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  buckets: readonly number[];
  registry: Registry;
  labelTexts?: LabelTexts<L>;
}

const CLOSE = Buffer.from("} ");

/**
 * A histogram with one series per group, rendered by itself: the text prom-client's Histogram
 * writes, without its cost. prom-client builds, at every scrape, one object and one labels object
 * per bucket line and formats each line's labels again: 13 lines per group, so 130,000 objects at
 * 10,000 groups, the largest part of a leader's scrape. Here a series is a row of counts in
 * typed arrays, its label text formatted and encoded once per group, and its lines written as
 * bytes (ExpositionWriter).
 */
export class GroupHistogram<L extends string> {
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  private readonly bounds: readonly number[];
  /** `name_bucket{le="0.005",` per bound, then the +Inf one: the fixed start of each line. */
  private readonly bucketPrefixes: readonly Buffer[];
  private readonly sumPrefix: Buffer;
  private readonly countPrefix: Buffer;
  private readonly columns: HistogramColumn[] = [];
  private readonly texts: LabelTexts<L>;

  constructor(options: GroupHistogramOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames;
    this.bounds = [...options.buckets].sort((a, b) => a - b);
    this.bucketPrefixes = [...this.bounds.map(String), "+Inf"].map((le) =>
      Buffer.from(`${this.name}_bucket{le="${le}",`),
    );
    this.sumPrefix = Buffer.from(`${this.name}_sum{`);
    this.countPrefix = Buffer.from(`${this.name}_count{`);
    const shared = options.labelTexts;
    this.texts =
      shared !== undefined && shared.labelNames.join() === options.labelNames.join()
        ? shared
        : new LabelTexts(options.labelNames);
    (options.registry as unknown as { registerMetric(metric: unknown): void }).registerMetric(this);
  }

  private column(tail: Interned): HistogramColumn {
    for (const column of this.columns) if (column.tail === tail) return column;
    const made = new HistogramColumn(tail, this.bounds.length + 1);
    this.columns.push(made);
    return made;
  }

  observe(labels: Labels<L>, value: number): void {
    const { head, tail } = this.texts.series(labels);
    const column = this.column(tail);
    column.start(head);
    const found = this.bounds.findIndex((bound) => value <= bound);
    const slot = head.row * (this.bounds.length + 1) + (found === -1 ? this.bounds.length : found);
    column.counts[slot] = (column.counts[slot] ?? 0) + 1;
    column.sums[head.row] = (column.sums[head.row] ?? 0) + value;
    column.totals[head.row] = (column.totals[head.row] ?? 0) + 1;
  }

  /** Removes the series of these labels (a group that went away leaves /metrics). */
  remove(labels: Labels<L>): void {
    const { head, tail } = this.texts.series(labels);
    const column = this.columns.find((candidate) => candidate.tail === tail);
    if (column?.heads[head.row] === head) column.heads[head.row] = undefined;
  }

  /** Each series: its pieces, cumulative bucket counts, sum and count, in the order of rows. */
  private *each(): Generator<[Interned, Interned, number[], number, number]> {
    const slots = this.bounds.length + 1;
    const rows = Math.max(0, ...this.columns.map((column) => column.heads.length));
    for (let row = 0; row < rows; row += 1) {
      for (const column of this.columns) {
        const head = column.heads[row];
        if (head === undefined) continue;
        let cumulative = 0;
        const buckets: number[] = [];
        for (let i = 0; i < slots; i += 1) {
          cumulative += column.counts[row * slots + i] ?? 0;
          buckets.push(cumulative);
        }
        yield [head, column.tail, buckets, column.sums[row] ?? 0, column.totals[row] ?? 0];
      }
    }
  }

  /** The family's text, without the last newline (tests; JanitorRegistry writes write()). */
  *pieces(seriesPerSpan = 250): Generator<string> {
    const writer = new ExpositionWriter();
    const chunks = [...this.write(writer, seriesPerSpan), ...writer.end()];
    const text = Buffer.concat(chunks).toString("utf8");
    yield text.slice(0, -1);
  }

  /**
   * Writes the family, each line ending in a newline, exactly as prom-client's registry writes
   * it; the chunks filled are handed on every `seriesPerSpan` series.
   */
  *write(writer: ExpositionWriter, seriesPerSpan = 250): Generator<Buffer> {
    writer.text(`# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} histogram\n`);
    let written = 0;
    for (const [head, tail, buckets, sum, count] of this.each()) {
      const [headBytes, tailBytes] = [head.bytes, tail.bytes];
      buckets.forEach((cumulative, i) => {
        writer.line(this.bucketPrefixes[i] as Buffer, headBytes, tailBytes, CLOSE, cumulative);
      });
      writer.line(this.sumPrefix, headBytes, tailBytes, CLOSE, sum);
      writer.line(this.countPrefix, headBytes, tailBytes, CLOSE, count);
      written += 1;
      if (written % seriesPerSpan === 0) yield* writer.full();
    }
    yield* writer.full();
  }

  /** The labels of a series, given back from its pieces (in the family's label order). */
  private labelsOf(head: Interned, tail: Interned): Labels<L> {
    const values = [...head.values, ...tail.values];
    return Object.fromEntries(this.labelNames.map((name, i) => [name, values[i]])) as Labels<L>;
  }

  /** What prom-client's own renderer reads (a registry other than JanitorRegistry). */
  getForPromString(): Promise<HistogramFamily> {
    const values: PromValue[] = [];
    const les = [...this.bounds, "+Inf"];
    for (const [head, tail, buckets, sum, count] of this.each()) {
      const sharedLabels = this.labelsOf(head, tail);
      les.forEach((le, i) => {
        const value = buckets[i] ?? 0;
        values.push({ labels: { le }, sharedLabels, value, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: {}, sharedLabels, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels, value: count, metricName: `${this.name}_count` });
    }
    const { name, help, type, aggregator } = this;
    return Promise.resolve({ name, help, type, aggregator, values });
  }

  /** prom-client's reading interface (JSON, tests, forgetGroupSeries): labels splayed, as it does. */
  async get(): Promise<HistogramFamily> {
    const family = await this.getForPromString();
    const values = family.values.map(({ labels, sharedLabels, value, metricName }) => ({
      labels: { ...labels, ...sharedLabels },
      value,
      metricName,
    }));
    return { ...family, values };
  }
}
