import { GROUP_STATUSES, type GroupStatusReport, type StatusReport } from "../core/groupStatus.js";
import { alignTable } from "./alignTable.js";
import { formatDuration } from "./formatDuration.js";
import { laneWork } from "./formatInspectReport.js";

const HEADER = ["STREAM", "GROUP", "STATUS", "SINCE", "LAG", "PENDING", "DUE", "REASON"] as const;
const NUMERIC = new Set([4, 5, 6]);

function count(value: number | null): string {
  return value === null ? "?" : String(value);
}

function row(group: GroupStatusReport, generatedAt: number): string[] {
  const { sample } = group;
  return [
    group.stream,
    group.group,
    group.status,
    // How long the status has held at the latest sample: both times are the Redis clock's.
    formatDuration(Math.max(0, generatedAt - group.since)),
    count(sample.lag),
    count(sample.pending),
    count(sample.due),
    group.reason,
  ];
}

/** Who answered: the leader or a replica, the server it samples, what the verdicts looked at. */
function headerLine(report: StatusReport): string {
  const { leader, server, sampling } = report;
  const who = leader.isLeader
    ? `leader ${leader.instance} (fencing token ${leader.fencingToken ?? "?"})`
    : `replica ${leader.instance} (not the leader)`;
  const product =
    server.product === null
      ? `server not detected yet (${server.mode})`
      : `${server.product} ${server.version ?? "?"} ${server.mode}`;
  if (report.sampledBy === "command") {
    const span = formatDuration(sampling.intervalMs * (sampling.window - 1));
    return `sampled by this command, ${sampling.window} samples over ${span}, ${product}`;
  }
  const window = `sampled every ${formatDuration(sampling.intervalMs)} over ${sampling.window} samples`;
  return `${who}, ${product}, ${window}`;
}

/**
 * The human form of `stream-janitor status`: a header line, then one row per group, the statuses
 * that call for attention first (in the verdict table's order), then UNKNOWN and OK.
 */
export function formatStatusReport(report: StatusReport): string {
  if (report.groups.length === 0) return `${headerLine(report)}\n\nno groups sampled yet`;
  const rank = (group: GroupStatusReport): number => GROUP_STATUSES.indexOf(group.status);
  const groups = [...report.groups].sort((a, b) => rank(a) - rank(b));
  const rows = groups.map((group) => row(group, report.generatedAt));
  const table = `${headerLine(report)}\n\n${alignTable([[...HEADER], ...rows], NUMERIC)}`;
  // A group's retry lane is its work too: what waits there, under the table.
  const lanes = groups
    .filter(({ sample }) => sample.retryLaneLag !== undefined)
    .map(
      ({ stream, group, sample }) =>
        `retry lane of ${stream}/${group}: ${count(sample.retryLane)} entries` +
        laneWork({ lag: sample.retryLaneLag ?? null, pending: sample.retryLanePending ?? null }),
    );
  return [table, ...(lanes.length > 0 ? ["", ...lanes] : [])].join("\n");
}
