/** One metric family: how METRIC_TABLE (metricTable.ts) describes it. */
export interface MetricDescription {
  readonly name: string;
  readonly type: "gauge" | "counter" | "histogram";
  readonly help: string;
  readonly labelNames: readonly string[];
  /**
   * One series per group (or stream) in the compact form that renders itself (GroupGauge,
   * GroupCounter: see GroupSeries; GroupHistogram). A gauge of this form is replaced wholesale
   * at each scrape.
   */
  readonly perGroup?: true;
  /**
   * A per-group family whose extra label takes values without bound (consumer names): kept in a
   * map by series rather than in a column of values per label value (see SeriesStore).
   */
  readonly openLabel?: true;
  readonly buckets?: readonly number[];
}

/** The labels of a per-group series. */
export const GROUP_LABELS = ["stream", "group"] as const;
