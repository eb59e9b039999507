import type { GroupStatusReport } from "../core/groupStatus.js";
import type { StatusAnswer } from "./fetchStatusReport.js";
import type { InspectReport } from "./inspectReport.js";

/**
 * inspect's report with each group's verdict as a running janitor has it (the window of samples
 * behind a verdict lives in the janitor's memory: inspect reads Redis once and cannot judge);
 * status null for a group it has not sampled, and for all of them, with the reason, when no
 * janitor answered. Only additions: the fields read from Redis stay as they are.
 */
export function addGroupStatuses(report: InspectReport, answer: StatusAnswer): InspectReport {
  const key = (stream: string, group: string): string => JSON.stringify([stream, group]);
  const verdicts = new Map<string, GroupStatusReport>(
    answer.ok
      ? answer.report.groups.map((verdict) => [key(verdict.stream, verdict.group), verdict])
      : [],
  );
  const groups = report.groups.map((group) => {
    const verdict = verdicts.get(key(group.stream, group.group));
    return { ...group, status: verdict?.status ?? null, statusReason: verdict?.reason ?? null };
  });
  return answer.ok ? { ...report, groups } : { ...report, groups, statusProblem: answer.problem };
}
