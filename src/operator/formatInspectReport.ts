import type { GroupInspection, InspectReport } from "./inspectReport.js";

/** `3d4h`, `2h5m`, `4m12s`, `950ms`: two units at most, enough to act on. */
function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "-";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const units: [string, number][] = [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ];
  const parts: string[] = [];
  let rest = ms;
  for (const [name, size] of units) {
    if (rest >= size || parts.length > 0) {
      parts.push(`${Math.floor(rest / size)}${name}`);
      rest %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join("");
}

/** Columns padded to their widest cell; numbers right-aligned. */
function alignTable(rows: readonly (readonly string[])[], numeric: ReadonlySet<number>) {
  const widths: number[] = [];
  for (const row of rows)
    row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) =>
          numeric.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0),
        )
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

const HEADER = [
  "STREAM",
  "GROUP",
  "PENDING",
  "OLDEST PENDING",
  "TOP CONSUMERS",
  "LAG",
  "LAG AGE",
  "DEAD LETTERS",
  "OLDEST DEAD",
  "HEADROOM",
  "DUE",
] as const;
const NUMERIC = new Set([2, 5, 7, 10]);

function row(group: GroupInspection): string[] {
  if (group.error !== undefined) {
    return [group.stream, group.group, "-", `error: ${group.error}`, "", "", "", "", "", "", ""];
  }
  const top =
    group.topConsumers?.map(({ consumer, pending }) => `${consumer}:${pending}`).join(",") ?? "";
  const more = (group.consumersWithPending ?? 0) - (group.topConsumers?.length ?? 0);
  return [
    group.stream,
    group.group,
    String(group.pending ?? 0),
    formatDuration(group.oldestPendingAgeMs),
    (top === "" ? "-" : top) + (more > 0 ? ` +${more}` : ""),
    group.lag === null || group.lag === undefined ? "?" : String(group.lag),
    formatDuration(group.lagMs),
    String(group.deadLetterLength ?? 0),
    formatDuration(group.oldestDeadLetterAgeMs),
    formatDuration(group.retentionHeadroomMs),
    group.pendingDue === undefined
      ? "-"
      : `${group.pendingDue}${group.pendingDueAtLeast === true ? "+" : ""}`,
  ];
}

function leaseLine(report: InspectReport): string {
  const { lease } = report;
  const token = lease.fencingToken === null ? "none yet" : String(lease.fencingToken);
  if (!lease.held) return `lease ${lease.key}: free (last fencing token ${token})`;
  const holder = `${lease.holderHost ?? "?"} pid ${lease.holderPid ?? "?"}`;
  return `lease ${lease.key}: held by ${holder}, fencing token ${token}, ${formatDuration(lease.timeLeftMs)} left`;
}

/** The human form of `inspect`: an aligned table of the groups, then the lease. */
export function formatInspectReport(report: InspectReport): string {
  if (report.groups.length === 0) return `no groups configured\n${leaseLine(report)}`;
  const table = alignTable([[...HEADER], ...report.groups.map(row)], NUMERIC);
  const retention = report.groups
    .filter((g) => g.retention !== undefined)
    .map(
      ({ retention }) =>
        `retention ${retention?.stream}: maxLen ${retention?.maxLen}, maxAgeMs ${retention?.maxAgeMs}`,
    );
  const lanes = report.groups
    .filter((g) => g.retryLaneStream !== undefined && g.error === undefined)
    .map(
      (g) =>
        `retry lane of ${g.stream}/${g.group}: ${g.retryLaneStream}, ${g.retryLaneLength ?? 0} entries`,
    );
  return [table, "", ...new Set(retention), ...lanes, leaseLine(report)].join("\n");
}
