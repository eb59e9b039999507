import type { Registry } from "prom-client";
import { escapeHelp, LabelTexts, valueText, type SeriesText } from "./LabelTexts.js";

export type Labels<L extends string> = Readonly<Record<L, string>>;

export interface Sample<L extends string> {
  value: number;
  /** Always this empty object: prom-client formats the labels it finds here one by one. */
  labels: Readonly<Record<string, never>>;
  /** The sample's labels, as prom-client's "shared labels" (which it formats once per object). */
  sharedLabels: Labels<L>;
  /** The label part of the line, in pieces shared with the other families (see LabelTexts). */
  text: SeriesText;
  /** The generation in which the sample was last set (see liveGeneration). */
  generation: number;
}

export const NO_LABELS: Readonly<Record<string, never>> = Object.freeze({});

export interface GroupSeriesOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registry: Registry;
  /** Shared with other families of the same label names (one text per group, not per series). */
  labelTexts?: LabelTexts<L>;
}

/**
 * A metric family with one series per group (or stream), registered in a prom-client Registry
 * beside the ordinary metrics. prom-client hashes every label set by sorting its keys at each
 * update, keeps a hash string per series, and formats each series' labels again at every scrape:
 * with 10,000 groups that was most of a scrape's Node time and of the process' live heap. Here a
 * series is one small object keyed by its label text, formatted once per labels object and shared
 * by the families (LabelTexts), and JanitorRegistry renders a family with render().
 */
export abstract class GroupSeries<L extends string> {
  abstract readonly type: "gauge" | "counter";
  readonly aggregator = "sum";
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  /** Every series by its key (see SeriesText). */
  protected readonly samples = new Map<string, Sample<L>>();
  private readonly texts: LabelTexts<L>;
  /** `name{` and `} `: each line is these around the series' shared pieces, then the value. */
  private readonly open: string;
  private readonly close: string;

  constructor(options: GroupSeriesOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames;
    const shared = options.labelTexts;
    this.texts =
      shared !== undefined && shared.labelNames.join() === options.labelNames.join()
        ? shared
        : new LabelTexts(options.labelNames);
    const bare = options.labelNames.length === 0;
    this.open = bare ? this.name : `${this.name}{`;
    this.close = bare ? " " : "} ";
    // The registry only needs name, help, type and get()/getForPromString(): its Metric type is
    // the prom-client class, which this is not, so it is registered through a structural cast.
    (options.registry as unknown as { registerMetric(metric: unknown): void }).registerMetric(this);
  }

  /**
   * Samples of an older generation are stale: stored, not exported (a gauge's reset() raises
   * it). A field rather than a method: render() checks it for every sample.
   */
  protected liveGeneration = 0;

  protected textOf(labels: Labels<L>): SeriesText {
    try {
      return this.texts.series(labels);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(`${this.name}: ${message}`, { cause: error });
    }
  }

  private *live(): Generator<Sample<L>> {
    for (const sample of this.samples.values()) {
      if (sample.generation >= this.liveGeneration) yield sample;
    }
  }

  /** prom-client's reading interface (JSON, tests): labels as usual. */
  get(): Promise<{
    name: string;
    help: string;
    type: "gauge" | "counter";
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
    type: "gauge" | "counter";
    aggregator: "sum";
    values: Sample<L>[];
  }> {
    return Promise.resolve({ ...this.describe(), values: [...this.live()] });
  }

  /** The family in the text exposition format, exactly as prom-client's registry writes it. */
  render(): string {
    return [...this.pieces()].join("");
  }

  /**
   * The same text in pieces of `seriesPerPiece` lines that concatenate to render(): a scrape
   * writes them out one by one instead of holding a family of 10,000 groups as one string.
   */
  *pieces(seriesPerPiece = 2000): Generator<string> {
    let lines = [
      `# HELP ${this.name} ${escapeHelp(this.help)}`,
      `# TYPE ${this.name} ${this.type}`,
    ];
    for (const sample of this.samples.values()) {
      if (sample.generation < this.liveGeneration) continue;
      const { head, tail } = sample.text;
      lines.push(`${this.open}${head.text}${tail.text}${this.close}${valueText(sample.value)}`);
      if (lines.length > seriesPerPiece) {
        // join() copies the lines into one flat string at once: their pieces die young.
        yield lines.join("\n");
        lines = [""];
      }
    }
    if (lines.length > 1 || lines[0] !== "") yield lines.join("\n");
  }

  /** Removes the series of these labels (a group that went away leaves /metrics). */
  remove(labels: Labels<L>): void {
    this.samples.delete(this.textOf(labels).key);
  }

  private describe(): {
    name: string;
    help: string;
    type: "gauge" | "counter";
    aggregator: "sum";
  } {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator };
  }
}
