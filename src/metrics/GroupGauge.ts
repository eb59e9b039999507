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
 * with 1,000 groups and a dozen gauges that was most of a scrape's Node time. Here a sample is
 * one Map entry keyed by the label values in their declared order, and the text formatting of
 * its labels is cached by prom-client across scrapes (see Sample.sharedLabels).
 */
export class GroupGauge<L extends string> {
  readonly type = "gauge";
  readonly aggregator = "sum";
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  private samples = new Map<string, Sample<L>>();
  /** The samples before the last reset(): set() reuses their objects instead of allocating. */
  private previous = new Map<string, Sample<L>>();
  private readonly keys = new WeakMap<Labels<L>, string>();
  /** `name{labels}` per labels object: the label objects of groups live as long as the config. */
  private readonly prefixes = new WeakMap<Labels<L>, string>();

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
    const known = this.keys.get(labels);
    if (known !== undefined) return known;
    let key = "";
    for (const name of this.labelNames) {
      const value = labels[name];
      if (typeof value !== "string") throw new Error(`${this.name}: label ${name} is missing`);
      key += `${value}\u0000`;
    }
    this.keys.set(labels, key);
    return key;
  }

  set(labels: Labels<L>, value: number): void {
    const key = this.key(labels);
    const sample = this.samples.get(key) ?? this.previous.get(key);
    if (sample === undefined) {
      this.samples.set(key, { value, labels: NO_LABELS, sharedLabels: labels });
      return;
    }
    sample.value = value;
    sample.sharedLabels = labels;
    this.samples.set(key, sample);
  }

  /** Drops every sample (series of groups that went away must disappear, not freeze). */
  reset(): void {
    this.previous = this.samples;
    this.samples = new Map();
  }

  /** prom-client's reading interface (JSON, tests): labels as usual. */
  get(): Promise<{
    name: string;
    help: string;
    type: "gauge";
    aggregator: "sum";
    values: { labels: Labels<L>; value: number }[];
  }> {
    const values = [...this.samples.values()].map((sample) => ({
      labels: sample.sharedLabels,
      value: sample.value,
    }));
    return Promise.resolve({ ...this.describe(), values });
  }

  /** What the registry renders as text: the samples as they are stored, no copy. */
  getForPromString(): Promise<{
    name: string;
    help: string;
    type: "gauge";
    aggregator: "sum";
    values: Sample<L>[];
  }> {
    return Promise.resolve({ ...this.describe(), values: [...this.samples.values()] });
  }

  /**
   * The family in the text exposition format, exactly as prom-client's registry would write it
   * (JanitorRegistry uses this instead of formatting sample by sample).
   */
  render(): string {
    const lines = [`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} gauge`];
    for (const sample of this.samples.values()) {
      lines.push(`${this.prefix(sample.sharedLabels)} ${valueText(sample.value)}`);
    }
    return lines.join("\n");
  }

  private prefix(labels: Labels<L>): string {
    let prefix = this.prefixes.get(labels);
    if (prefix === undefined) {
      prefix = `${this.name}${labelText(labels)}`;
      this.prefixes.set(labels, prefix);
    }
    return prefix;
  }

  private describe(): { name: string; help: string; type: "gauge"; aggregator: "sum" } {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator };
  }
}
