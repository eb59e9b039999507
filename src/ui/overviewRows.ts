import { GROUP_STATUSES, type GroupStatusReport, type StatusReport } from "../core/groupStatus.js";
import { lagAgeMs, oldestPendingIdle } from "./format.js";
import type { OverviewQuery, SortKey } from "./overviewQuery.js";
import type { SweepLog, SweepRecord } from "./SweepLog.js";

export interface OverviewRow {
  report: GroupStatusReport;
  lagAgeMs: number | null;
  lastSweep: SweepRecord | undefined;
}

export interface OverviewPage {
  rows: OverviewRow[];
  /** Groups that pass the filter (all pages). */
  matching: number;
  total: number;
  page: number;
  pages: number;
  /** Groups per status among all groups, for the summary line. */
  counts: Map<string, number>;
}

const SEVERITY = new Map<string, number>(GROUP_STATUSES.map((status, index) => [status, index]));

type Value = number | string | null;

const SORT_VALUE: Record<SortKey, (row: OverviewRow) => Value> = {
  status: (row) => SEVERITY.get(row.report.status) ?? GROUP_STATUSES.length,
  stream: (row) => row.report.stream,
  group: (row) => row.report.group,
  lag: (row) => row.report.sample.lag,
  lagAge: (row) => row.lagAgeMs,
  pending: (row) => row.report.sample.pending,
  oldest: (row) => oldestPendingIdle(row.report.sample),
  due: (row) => row.report.sample.due,
  deadLetters: (row) => row.report.sample.deadLetters,
  retryLane: (row) => row.report.sample.retryLane,
  lastSweep: (row) => row.lastSweep?.atMs ?? null,
};

function compareValues(a: Value, b: Value): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
}

/**
 * Filter, sort and page the board's latest report: plain work over the samples already in
 * memory, no Redis read. Unknown values (null) sort last in either direction; ties keep the
 * stream/group order so pages are stable between refreshes.
 */
export function overviewPage(
  report: StatusReport,
  sweeps: SweepLog,
  query: OverviewQuery,
): OverviewPage {
  const counts = new Map<string, number>();
  const needle = query.text.toLowerCase();
  const rows: OverviewRow[] = [];
  for (const group of report.groups) {
    counts.set(group.status, (counts.get(group.status) ?? 0) + 1);
    if (query.status !== undefined && group.status !== query.status) continue;
    if (
      needle !== "" &&
      !group.stream.toLowerCase().includes(needle) &&
      !group.group.toLowerCase().includes(needle)
    ) {
      continue;
    }
    rows.push({
      report: group,
      lagAgeMs: lagAgeMs(group.sample.lag, group.sample.lastDeliveredId, report.generatedAt),
      lastSweep: sweeps.lastOf(group.stream, group.group),
    });
  }
  const value = SORT_VALUE[query.sort];
  const direction = query.descending ? -1 : 1;
  rows.sort((a, b) => {
    const va = value(a);
    const vb = value(b);
    if (va !== vb) {
      if (va === null) return 1;
      if (vb === null) return -1;
      const order = compareValues(va, vb);
      if (order !== 0) return order * direction;
    }
    return (
      compareValues(a.report.stream, b.report.stream) ||
      compareValues(a.report.group, b.report.group)
    );
  });
  const pages = Math.max(1, Math.ceil(rows.length / query.per));
  const page = Math.min(query.page, pages);
  return {
    rows: rows.slice((page - 1) * query.per, page * query.per),
    matching: rows.length,
    total: report.groups.length,
    page,
    pages,
    counts,
  };
}
