import type { Registry } from "prom-client";
import { escapeHelp, LabelTexts, type Interned, type SeriesText } from "./LabelTexts.js";
import { ExpositionWriter } from "./ExpositionWriter.js";
import { ColumnStore, MapStore, type SeriesStore } from "./SeriesStore.js";

export type Labels<L extends string> = Readonly<Record<L, string>>;

/** A series as prom-client's renderer reads it (getForPromString). */
interface PromSample<L extends string> {
  value: number;
  /** Always this empty object: prom-client formats the labels it finds here one by one. */
  labels: Readonly<Record<string, never>>;
  /** The sample's labels, as prom-client's "shared labels" (which it formats once per object). */
  sharedLabels: Labels<L>;
}

const NO_LABELS: Readonly<Record<string, never>> = Object.freeze({});

export interface GroupSeriesOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registry: Registry;
  /** Shared with other families of the same label names (one text per group, not per series). */
  labelTexts?: LabelTexts<L>;
  /**
   * The extra label takes values without bound (consumer names): series in a map, not in a
   * column per value (see SeriesStore).
   */
  openLabel?: boolean;
}

/**
 * A metric family with one series per group (or stream), registered in a prom-client Registry
 * beside the ordinary metrics. prom-client hashes every label set by sorting its keys at each
 * update, keeps a hash string per series, and formats each series' labels again at every scrape:
 * with 10,000 groups that was most of a scrape's Node time and of the process' live heap. Here a
 * series is a slot in a column of values indexed by its group's row (SeriesStore), its label
 * text formatted once per group and shared by the families (LabelTexts), and JanitorRegistry
 * renders a family with pieces().
 */
export abstract class GroupSeries<L extends string> {
  abstract readonly type: "gauge" | "counter";
  readonly aggregator = "sum";
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  /** Every series' value (see SeriesStore). */
  protected readonly store: SeriesStore;
  private readonly texts: LabelTexts<L>;
  /** `name{` and `} `: each line is these around the series' shared pieces, then the value. */
  private readonly open: Buffer;
  private readonly close: Buffer;

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
    this.open = Buffer.from(bare ? this.name : `${this.name}{`);
    this.close = Buffer.from(bare ? " " : "} ");
    this.store = options.openLabel === true ? new MapStore() : new ColumnStore();
    // The registry only needs name, help, type and get()/getForPromString(): its Metric type is
    // the prom-client class, which this is not, so it is registered through a structural cast.
    (options.registry as unknown as { registerMetric(metric: unknown): void }).registerMetric(this);
  }

  /**
   * Samples of an older generation are stale: stored, not exported (a gauge's reset() raises
   * it). A field rather than a method: render() checks it for every sample.
   */
  protected liveGeneration = 0;

  protected textOf(labels: Labels<L>, extra?: string): SeriesText {
    try {
      return extra === undefined ? this.texts.series(labels) : this.texts.seriesWith(labels, extra);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(`${this.name}: ${message}`, { cause: error });
    }
  }

  /** The labels of a series, given back from its pieces (in the family's label order). */
  private labelsOf(head: Interned, tail: Interned): Labels<L> {
    const values = [...head.values, ...tail.values];
    return Object.fromEntries(this.labelNames.map((name, i) => [name, values[i]])) as Labels<L>;
  }

  private live(): PromSample<L>[] {
    const samples: PromSample<L>[] = [];
    this.store.forEach(this.liveGeneration, (head, tail, value) => {
      samples.push({ value, labels: NO_LABELS, sharedLabels: this.labelsOf(head, tail) });
    });
    return samples;
  }

  /** prom-client's reading interface (JSON, tests): labels as usual. */
  get(): Promise<{
    name: string;
    help: string;
    type: "gauge" | "counter";
    aggregator: "sum";
    values: { labels: Labels<L>; value: number }[];
  }> {
    const values = this.live().map((sample) => ({
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
    values: PromSample<L>[];
  }> {
    return Promise.resolve({ ...this.describe(), values: this.live() });
  }

  /** The family in the text exposition format, exactly as prom-client's registry writes it. */
  render(): string {
    const writer = new ExpositionWriter();
    const chunks = [...this.write(writer), ...writer.end()];
    return Buffer.concat(chunks).toString("utf8").slice(0, -1);
  }

  /**
   * Writes the family, each line ending in a newline, a span of `rowsPerSpan` groups at a time:
   * a scrape hands on the chunks filled after each span instead of holding the family whole.
   */
  *write(writer: ExpositionWriter, rowsPerSpan = 2000): Generator<Buffer> {
    writer.text(`# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} ${this.type}\n`);
    const { open, close } = this;
    const line = (head: Interned, tail: Interned, value: number): void => {
      writer.line(open, head.bytes, tail.bytes, close, value);
    };
    const span = this.store.span();
    for (let from = 0; from < span; from += rowsPerSpan) {
      this.store.forEach(this.liveGeneration, line, from, from + rowsPerSpan);
      yield* writer.full();
    }
  }

  /** Removes the series of these labels (a group that went away leaves /metrics). */
  remove(labels: Labels<L>): void {
    const { head, tail } = this.textOf(labels);
    this.store.delete(head, tail);
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
