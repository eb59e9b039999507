import type { Registry } from "prom-client";
import { escapeHelp, LabelTexts, valueText, type SeriesText } from "./LabelTexts.js";
import type { Labels } from "./GroupSeries.js";

interface Series<L extends string> {
  /** Observations per bucket, not cumulative (the last slot counts those above every bound). */
  counts: number[];
  sum: number;
  count: number;
  labels: Labels<L>;
  /** `stream="...",group="..."` in shared pieces (see LabelTexts), for every line of the series. */
  text: SeriesText;
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

/**
 * A histogram with one series per group, rendered by itself: the text prom-client's Histogram
 * writes, without its cost. prom-client builds, at every scrape, one object and one labels object
 * per bucket line and formats each line's labels again: 13 lines per group, so 130,000 objects at
 * 10,000 groups, the largest part of a leader's scrape. Here a series is an array of counts and
 * its label text, formatted once.
 */
export class GroupHistogram<L extends string> {
  readonly type = "histogram";
  readonly aggregator = "sum";
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  private readonly bounds: readonly number[];
  /** `name_bucket{le="0.005",` per bound, then the +Inf one: the fixed start of each line. */
  private readonly bucketPrefixes: readonly string[];
  private readonly series = new Map<string, Series<L>>();
  private readonly texts: LabelTexts<L>;

  constructor(options: GroupHistogramOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames;
    this.bounds = [...options.buckets].sort((a, b) => a - b);
    this.bucketPrefixes = [...this.bounds.map(String), "+Inf"].map(
      (le) => `${this.name}_bucket{le="${le}",`,
    );
    const shared = options.labelTexts;
    this.texts =
      shared !== undefined && shared.labelNames.join() === options.labelNames.join()
        ? shared
        : new LabelTexts(options.labelNames);
    (options.registry as unknown as { registerMetric(metric: unknown): void }).registerMetric(this);
  }

  observe(labels: Labels<L>, value: number): void {
    const text = this.texts.series(labels);
    let series = this.series.get(text.key);
    if (series === undefined) {
      const counts = new Array<number>(this.bounds.length + 1).fill(0);
      series = { counts, sum: 0, count: 0, labels, text };
      this.series.set(text.key, series);
    }
    const found = this.bounds.findIndex((bound) => value <= bound);
    const slot = found === -1 ? this.bounds.length : found;
    series.counts[slot] = (series.counts[slot] ?? 0) + 1;
    series.sum += value;
    series.count += 1;
  }

  /** Removes the series of these labels (a group that went away leaves /metrics). */
  remove(labels: Labels<L>): void {
    this.series.delete(this.texts.series(labels).key);
  }

  /**
   * The family in the text exposition format, in pieces of about `seriesPerPiece` series, exactly
   * as prom-client's registry writes it once joined.
   */
  *pieces(seriesPerPiece = 250): Generator<string> {
    let lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} histogram`];
    let inPiece = 0;
    for (const series of this.series.values()) {
      const inner = `${series.text.head.text}${series.text.tail.text}`;
      let cumulative = 0;
      for (let i = 0; i < series.counts.length; i += 1) {
        cumulative += series.counts[i] ?? 0;
        lines.push(`${this.bucketPrefixes[i] ?? ""}${inner}} ${valueText(cumulative)}`);
      }
      lines.push(`${this.name}_sum{${inner}} ${valueText(series.sum)}`);
      lines.push(`${this.name}_count{${inner}} ${valueText(series.count)}`);
      inPiece += 1;
      if (inPiece === seriesPerPiece) {
        yield lines.join("\n");
        lines = [""];
        inPiece = 0;
      }
    }
    if (lines.length > 1 || lines[0] !== "") yield lines.join("\n");
  }

  /** What prom-client's own renderer reads (a registry other than JanitorRegistry). */
  getForPromString(): Promise<HistogramFamily> {
    const values: PromValue[] = [];
    for (const series of this.series.values()) {
      const sharedLabels = series.labels;
      let cumulative = 0;
      const les = [...this.bounds, "+Inf"];
      les.forEach((le, i) => {
        cumulative += series.counts[i] ?? 0;
        values.push({
          labels: { le },
          sharedLabels,
          value: cumulative,
          metricName: `${this.name}_bucket`,
        });
      });
      values.push({ labels: {}, sharedLabels, value: series.sum, metricName: `${this.name}_sum` });
      values.push({
        labels: {},
        sharedLabels,
        value: series.count,
        metricName: `${this.name}_count`,
      });
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
