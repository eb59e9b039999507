import type { Registry } from "prom-client";

type Labels<L extends string> = Readonly<Record<L, string>>;

interface Sample<L extends string> {
  value: number;
  /** Always this empty object: prom-client formats the labels it finds here one by one. */
  labels: Readonly<Record<string, never>>;
  /**
   * The sample's labels, as prom-client's "shared labels": it formats each such object once and
   * caches the text by object identity, so a caller that passes the same labels object scrape
   * after scrape (applyGroupGauges does, per group) pays for the formatting once.
   */
  sharedLabels: Labels<L>;
  /** `name{labels}`: the start of the sample's line, formatted once for the series' life. */
  prefix: string;
  /** The last line rendered and the value it shows: most values do not change between scrapes. */
  line: string | undefined;
  lineValue: number;
  /** The reset() generation in which the sample was last set: older ones are not exported. */
  generation: number;
  /** Deleted from the gauge: a labels object that still points here must look it up again. */
  removed: boolean;
}

const NO_LABELS: Readonly<Record<string, never>> = Object.freeze({});

/** Text exposition escaping, as prom-client does it. */
const escapeHelp = (text: string): string => text.replace(/\\/gu, "\\\\").replace(/\n/gu, "\\n");
const escapeLabel = (text: string): string => escapeHelp(text).replace(/"/gu, '\\"');

/** `{name="value",...}`, or "" without labels: the label part of a sample line. */
export function labelText(labels: Readonly<Record<string, string | number>>): string {
  const pairs = Object.entries(labels).map(
    ([name, value]) => `${name}="${typeof value === "string" ? escapeLabel(value) : value}"`,
  );
  return pairs.length === 0 ? "" : `{${pairs.join(",")}}`;
}

export function valueText(value: number): string {
  if (Number.isNaN(value)) return "Nan";
  if (!Number.isFinite(value)) return value < 0 ? "-Inf" : "+Inf";
  return `${value}`;
}

/**
 * A gauge for the per-group series that every scrape replaces wholesale, registered in a
 * prom-client Registry beside the ordinary metrics. prom-client's Gauge hashes every label set
 * by sorting its keys on each set() and keeps samples in a plain object rebuilt at each reset;
 * with 10,000 groups and a dozen gauges that was most of a scrape's Node time. Here a series is
 * one object, created once and found from its labels object in one WeakMap lookup; reset() only
 * bumps a generation (a sample not set since is not exported), so a scrape allocates nothing per
 * series, and the text before the value is formatted once per series.
 */
export class GroupGauge<L extends string> {
  readonly type = "gauge";
  readonly aggregator = "sum";
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  /** Every series by its label values in declared order, live or stale. */
  private readonly samples = new Map<string, Sample<L>>();
  /** The series of a labels object: the label objects of groups live as long as the group. */
  private readonly byLabels = new WeakMap<Labels<L>, Sample<L>>();
  private generation = 0;

  constructor(options: {
    name: string;
    help: string;
    labelNames: readonly L[];
    registry: Registry;
  }) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames;
    // The registry only needs name, help, type and get()/getForPromString(): its Metric type is
    // the prom-client class, which this is not, so it is registered through a structural cast.
    (options.registry as unknown as { registerMetric(metric: unknown): void }).registerMetric(this);
  }

  private key(labels: Labels<L>): string {
    let key = "";
    for (const name of this.labelNames) {
      const value = labels[name];
      if (typeof value !== "string") throw new Error(`${this.name}: label ${name} is missing`);
      key += `${value}\u0000`;
    }
    return key;
  }

  set(labels: Labels<L>, value: number): void {
    let sample = this.byLabels.get(labels);
    if (sample === undefined || sample.removed) {
      const key = this.key(labels);
      sample = this.samples.get(key);
      if (sample === undefined) {
        sample = {
          value,
          labels: NO_LABELS,
          sharedLabels: labels,
          prefix: `${this.name}${labelText(labels)}`,
          line: undefined,
          lineValue: 0,
          generation: this.generation,
          removed: false,
        };
        this.samples.set(key, sample);
      } else if (sample.sharedLabels !== labels) {
        sample.sharedLabels = labels;
        sample.prefix = `${this.name}${labelText(labels)}`;
        sample.line = undefined;
      }
      this.byLabels.set(labels, sample);
    }
    sample.value = value;
    sample.generation = this.generation;
  }

  /**
   * Drops every sample (series of groups that went away must disappear, not freeze). A series
   * not set since the previous reset is deleted for good, so gone groups do not pile up.
   */
  reset(): void {
    for (const [key, sample] of this.samples) {
      if (sample.generation === this.generation) continue;
      sample.removed = true;
      this.samples.delete(key);
    }
    this.generation += 1;
  }

  private *live(): Generator<Sample<L>> {
    for (const sample of this.samples.values()) {
      if (sample.generation === this.generation) yield sample;
    }
  }

  /** prom-client's reading interface (JSON, tests): labels as usual. */
  get(): Promise<{
    name: string;
    help: string;
    type: "gauge";
    aggregator: "sum";
    values: { labels: Labels<L>; value: number }[];
  }> {
    const values = [...this.live()].map((sample) => ({
      labels: sample.sharedLabels,
      value: sample.value,
    }));
    return Promise.resolve({ ...this.describe(), values });
  }

  /** What prom-client's own renderer reads (a registry other than JanitorRegistry). */
  getForPromString(): Promise<{
    name: string;
    help: string;
    type: "gauge";
    aggregator: "sum";
    values: Sample<L>[];
  }> {
    return Promise.resolve({ ...this.describe(), values: [...this.live()] });
  }

  /**
   * The family in the text exposition format, exactly as prom-client's registry would write it
   * (JanitorRegistry uses this instead of formatting sample by sample).
   */
  render(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} gauge`];
    for (const sample of this.samples.values()) {
      if (sample.generation !== this.generation) continue;
      if (sample.line === undefined || !Object.is(sample.lineValue, sample.value)) {
        sample.line = `${sample.prefix} ${valueText(sample.value)}`;
        sample.lineValue = sample.value;
      }
      lines.push(sample.line);
    }
    return lines.join("\n");
  }

  private describe(): { name: string; help: string; type: "gauge"; aggregator: "sum" } {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator };
  }
}
