import { GroupSeries, type Labels } from "./GroupSeries.js";

/**
 * A gauge for the per-group series that every scrape replaces wholesale. reset() only bumps a
 * generation (a sample not set since is not exported) and set() writes the series' slot, so a
 * scrape allocates nothing per series but the text of its lines.
 */
export class GroupGauge<L extends string> extends GroupSeries<L> {
  readonly type = "gauge";

  set(labels: Labels<L>, value: number): void {
    const { head, tail } = this.textOf(labels);
    this.store.write(head, tail, value, this.liveGeneration, false);
  }

  /**
   * Sets the series of a group's labels (stream, group) and `extra`, the value of the family's
   * one other label (a status): no labels object per series (see LabelTexts.seriesWith).
   */
  setWith(groupLabels: Labels<"stream" | "group">, extra: string, value: number): void {
    const { head, tail } = this.textOf(groupLabels as Labels<L>, extra);
    this.store.write(head, tail, value, this.liveGeneration, false);
  }

  /**
   * Drops every sample (series of groups that went away must disappear, not freeze). A series
   * not set since the previous reset is deleted for good, so gone groups do not pile up.
   */
  reset(): void {
    this.store.dropBelow(this.liveGeneration);
    this.liveGeneration += 1;
  }
}
