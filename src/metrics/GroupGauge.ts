import { GroupSeries, NO_LABELS, type Labels } from "./GroupSeries.js";

/**
 * A gauge for the per-group series that every scrape replaces wholesale. reset() only bumps a
 * generation (a sample not set since is not exported) and set() reuses the series' object, so a
 * scrape allocates nothing per series but the text of its lines.
 */
export class GroupGauge<L extends string> extends GroupSeries<L> {
  readonly type = "gauge";

  set(labels: Labels<L>, value: number): void {
    const text = this.textOf(labels);
    const sample = this.samples.get(text.key);
    if (sample === undefined) {
      const generation = this.liveGeneration;
      this.samples.set(text.key, {
        value,
        labels: NO_LABELS,
        sharedLabels: labels,
        text,
        generation,
      });
      return;
    }
    sample.value = value;
    sample.sharedLabels = labels;
    sample.generation = this.liveGeneration;
  }

  /**
   * Drops every sample (series of groups that went away must disappear, not freeze). A series
   * not set since the previous reset is deleted for good, so gone groups do not pile up.
   */
  reset(): void {
    for (const [key, sample] of this.samples) {
      if (sample.generation < this.liveGeneration) this.samples.delete(key);
    }
    this.liveGeneration += 1;
  }
}
