import { alignTable } from "./alignTable.js";
import { formatDuration } from "./formatDuration.js";
import type { GroupInspection } from "./inspectGroup.js";
import type { InspectReport } from "./inspectReport.js";

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
  "STATUS",
  "HEADROOM",
  "DUE",
] as const;
const NUMERIC = new Set([2, 5, 7, 11]);

function row(group: GroupInspection): string[] {
  if (group.error !== undefined) {
    const status = group.status ?? "-";
    return [
      group.stream,
      group.group,
      "-",
      `error: ${group.error}`,
      "",
      "",
      "",
      "",
      "",
      status,
      "",
      "",
    ];
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
    `${group.deadLetters ?? 0}${group.deadLettersAtLeast === true ? "+" : ""}`,
    formatDuration(group.oldestDeadLetterAgeMs),
    group.status ?? "-",
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

/** Why the groups not OK have their status; or why there is none (no janitor answered). */
function statusLines(report: InspectReport): string[] {
  if (report.statusProblem !== undefined) return [`status: ${report.statusProblem}`];
  return report.groups
    .filter((g) => g.status !== null && g.status !== undefined && g.status !== "OK")
    .map((g) => `status ${g.stream}/${g.group}: ${g.status}, ${g.statusReason ?? ""}`);
}

/** ", lag 2, 3 pending": the lane's work, "?" where unknown; nothing when not read. */
export function laneWork(lane: { lag: number | null; pending: number | null } | undefined): string {
  if (lane === undefined) return "";
  return `, lag ${lane.lag ?? "?"}, ${lane.pending ?? "?"} pending`;
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
        `retry lane of ${g.stream}/${g.group}: ${g.retryLaneStream}, ${g.retryLaneLength ?? 0} entries` +
        laneWork(g.retryLane),
    );
  return [
    table,
    "",
    ...new Set(retention),
    ...lanes,
    ...statusLines(report),
    leaseLine(report),
  ].join("\n");
}
