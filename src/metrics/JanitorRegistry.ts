import { Registry } from "prom-client";
import { GroupHistogram } from "./GroupHistogram.js";
import { GroupSeries } from "./GroupSeries.js";
import { ExpositionWriter } from "./ExpositionWriter.js";
import { labelText, valueText } from "./LabelTexts.js";

type RenderOne = (this: Registry, metric: unknown) => Promise<string>;

/**
 * prom-client's per-family renderer. It is not in the typings but is what `metrics()` calls for
 * each family (prom-client is pinned to an exact version, and test/metrics/JanitorRegistry.test.ts
 * compares both renderings, so a change there fails a test instead of the scrape).
 */
const renderOne = (Registry.prototype as unknown as { getMetricsAsString: RenderOne })
  .getMetricsAsString;

interface PlainValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
  exemplar?: unknown;
  sharedLabels?: unknown;
}

interface PlainFamily {
  name: string;
  help: string;
  type: string;
  values: PlainValue[];
}

function isPlainFamily(metric: unknown): metric is { get(): Promise<PlainFamily>; type: string } {
  const { type } = metric as { type?: unknown };
  return type === "counter" || type === "gauge";
}

/**
 * The daemon's registry: the same text as prom-client's, written faster. The per-group gauge
 * families (GroupGauge, GroupCounter) render themselves, and counters and gauges reuse the text of each labels
 * object: prom-client keeps the labels object of a series for its whole life, and formats it
 * again, with its escaping, at every scrape. With 1,000 groups a scrape has 18,000 lines.
 * Histograms (and anything unusual) go through prom-client's own renderer.
 */
export class JanitorRegistry extends Registry {
  private readonly labelTexts = new WeakMap<object, string>();

  /**
   * The exposition as UTF-8 chunks of a few hundred KB that concatenate to metrics(), each ending
   * at a line's end. The per-group families write their lines as bytes (ExpositionWriter), any
   * other family is formatted whole. A scrape compresses the chunks as they come, so the 35 MB
   * text of a leader of 10,000 groups never exists at once, as bytes or as a string.
   */
  async *chunks(): AsyncGenerator<Buffer> {
    if (this.contentType !== Registry.PROMETHEUS_CONTENT_TYPE) {
      yield Buffer.from(await super.metrics());
      return;
    }
    const writer = new ExpositionWriter();
    let first = true;
    for (const metric of this.getMetricsAsArray() as unknown[]) {
      // Families are separated by an empty line.
      if (!first) writer.text("\n");
      first = false;
      if (metric instanceof GroupSeries || metric instanceof GroupHistogram) {
        yield* metric.write(writer);
      } else {
        writer.text(`${await this.getMetricsAsString(metric)}\n`);
        yield* writer.full();
      }
    }
    if (first) writer.text("\n");
    yield* writer.end();
  }

  /** The same text as strings, chunk by chunk (each chunk ends at a line's end). */
  async *exposition(): AsyncGenerator<string> {
    for await (const chunk of this.chunks()) yield chunk.toString("utf8");
  }

  /** The whole text at once (tests, JSON-less callers); a scrape streams chunks() instead. */
  override async metrics(): Promise<string> {
    const pieces: string[] = [];
    for await (const piece of this.exposition()) pieces.push(piece);
    return pieces.join("");
  }

  async getMetricsAsString(metric: unknown): Promise<string> {
    if (metric instanceof GroupSeries) return metric.render();
    if (metric instanceof GroupHistogram) return [...metric.pieces()].join("");
    if (!isPlainFamily(metric) || Object.keys(this.defaultLabels()).length > 0) {
      return renderOne.call(this, metric);
    }
    const family = await metric.get();
    if (family.values.some((v) => v.metricName !== undefined || v.sharedLabels !== undefined)) {
      return renderOne.call(this, metric);
    }
    const lines = [`# HELP ${family.name} ${escapeHelpText(family.help)}`];
    lines.push(`# TYPE ${family.name} ${family.type}`);
    for (const { labels, value } of family.values) {
      lines.push(`${family.name}${this.labelsOf(labels)} ${valueText(value)}`);
    }
    return lines.join("\n");
  }

  private defaultLabels(): object {
    return (this as unknown as { _defaultLabels?: object })._defaultLabels ?? {};
  }

  private labelsOf(labels: Record<string, string | number>): string {
    let text = this.labelTexts.get(labels);
    if (text === undefined) {
      text = labelText(labels);
      this.labelTexts.set(labels, text);
    }
    return text;
  }
}

function escapeHelpText(text: string): string {
  return text.replace(/\\/gu, "\\\\").replace(/\n/gu, "\\n");
}
