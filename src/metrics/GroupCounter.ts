import { GroupSeries, type Labels } from "./GroupSeries.js";

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
    const { head, tail } = this.textOf(labels);
    this.store.write(head, tail, value, 0, true);
  }

  /** Adds to the series of a group's labels and `extra`, its one other label (see GroupGauge.setWith). */
  incWith(groupLabels: Labels<"stream" | "group">, extra: string, value = 1): void {
    if (!Number.isFinite(value) || value < 0) {
      throw new Error(`${this.name}: a counter only grows, by a finite amount (got ${value})`);
    }
    const { head, tail } = this.textOf(groupLabels as Labels<L>, extra);
    this.store.write(head, tail, value, 0, true);
  }

  reset(): void {
    this.store.clear();
  }
}
