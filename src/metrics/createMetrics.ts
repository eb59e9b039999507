import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { GroupCounter } from "./GroupCounter.js";
import { GroupGauge } from "./GroupGauge.js";
import { GroupHistogram } from "./GroupHistogram.js";
import { LabelTexts } from "./LabelTexts.js";
import type { MetricDescription } from "./metricTable.js";

type LabelOf<D> = D extends { readonly labelNames: readonly (infer L extends string)[] }
  ? L
  : never;
/** prom-client's own default (any label) for the families without labels. */
type Labelled<L extends string, Some, None> = [L] extends [never] ? None : Some;

/** The metric object a description gives (see createMetrics). */
type MetricOf<D extends MetricDescription> = D extends {
  readonly perGroup: true;
  readonly type: "histogram";
}
  ? GroupHistogram<LabelOf<D>>
  : D extends { readonly type: "histogram" }
    ? Histogram<LabelOf<D>>
    : D extends { readonly perGroup: true; readonly type: "gauge" }
      ? GroupGauge<LabelOf<D>>
      : D extends { readonly perGroup: true }
        ? GroupCounter<LabelOf<D>>
        : D extends { readonly type: "gauge" }
          ? Labelled<LabelOf<D>, Gauge<LabelOf<D>>, Gauge>
          : Labelled<LabelOf<D>, Counter<LabelOf<D>>, Counter>;

export type MetricsOf<S extends Record<string, MetricDescription>> = {
  readonly [K in keyof S]: MetricOf<S[K]>;
};

/**
 * The metric objects of one section of METRIC_TABLE, registered in `registry` in the table's
 * order (the order of /metrics). Per-group families of the same label names share one LabelTexts:
 * one label text per group (or stream), not one per series.
 */
export function createMetrics<S extends Record<string, MetricDescription>>(
  registry: Registry,
  section: S,
): MetricsOf<S> {
  const registers = [registry];
  const sharedTexts = new Map<string, LabelTexts<string>>();
  const textsFor = (labelNames: readonly string[]): LabelTexts<string> => {
    const key = labelNames.join();
    let texts = sharedTexts.get(key);
    if (texts === undefined) {
      texts = new LabelTexts(labelNames);
      sharedTexts.set(key, texts);
    }
    return texts;
  };
  const create = (description: MetricDescription): unknown => {
    const { name, help, labelNames } = description;
    if (description.perGroup === true) {
      const labelTexts = textsFor(labelNames);
      const options = { name, help, labelNames, registry, labelTexts };
      if (description.type === "histogram") {
        return new GroupHistogram({ ...options, buckets: description.buckets ?? [] });
      }
      const openLabel = description.openLabel === true;
      return description.type === "gauge"
        ? new GroupGauge({ ...options, openLabel })
        : new GroupCounter({ ...options, openLabel });
    }
    const common = { name, help, labelNames: [...labelNames], registers };
    if (description.type === "histogram") {
      return new Histogram({ ...common, buckets: [...(description.buckets ?? [])] });
    }
    return description.type === "gauge" ? new Gauge(common) : new Counter(common);
  };
  const metrics: Record<string, unknown> = {};
  for (const [key, description] of Object.entries(section)) metrics[key] = create(description);
  return metrics as MetricsOf<S>;
}
