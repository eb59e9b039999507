import { GroupSeries, NO_LABELS, type Labels } from "./GroupSeries.js";

/**
 * A counter with one series per group (per group and reason, kind...): what prom-client's Counter
 * does for these families (inc, get, remove, reset), in GroupSeries' compact form. Every group has
 * its counters from start-up (initGroupSeries), so with 10,000 groups these are 70,000 series.
 */
export class GroupCounter<L extends string> extends GroupSeries<L> {
  readonly type = "counter";

  inc(labels: Labels<L>, value = 1): void {
    if (!Number.isFinite(value) || value < 0) {
      throw new Error(`${this.name}: a counter only grows, by a finite amount (got ${value})`);
    }
    const text = this.textOf(labels);
    const sample = this.samples.get(text.key);
    if (sample === undefined) {
      this.samples.set(text.key, {
        value,
        labels: NO_LABELS,
        sharedLabels: labels,
        text,
        generation: 0,
      });
      return;
    }
    sample.value += value;
  }

  reset(): void {
    this.samples.clear();
  }
}
