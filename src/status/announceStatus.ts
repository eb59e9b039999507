import type { Logger } from "pino";
import { BAD_STATUSES, type GroupStatusReport } from "../core/groupStatus.js";
import type { AdvisoryEvent } from "../events/EventWriter.js";

export interface Announcement {
  /** The group's verdict before this sample; undefined for its first real verdict. */
  previous: GroupStatusReport | undefined;
  next: GroupStatusReport;
  /** Redis ms of the sample. */
  atMs: number;
}

export interface AnnounceTo {
  logger: Logger;
  /** Whether this replica holds the lease now: only the leader writes events. */
  isLeader: () => boolean;
  writeEvent: (event: AdvisoryEvent) => void;
}

/**
 * Says a verdict that changed, once per change, on every replica's log: warn when the group
 * turns to a bad status, info otherwise. The leader alone writes the `status-changed` event
 * (detail {from, to, reason}), so replicas write no duplicates. A group's
 * first verdict after start (or after the provisional UNKNOWN of its first sample) is not a
 * change: logged only when bad, never an event, so a restart does not flood the events stream.
 */
export function announceStatus(announcement: Announcement, to: AnnounceTo): void {
  const { previous, next } = announcement;
  const bad = BAD_STATUSES.includes(next.status);
  const fields = {
    stream: next.stream,
    group: next.group,
    status: next.status,
    previous: previous?.status ?? null,
    reason: next.reason,
  };
  const words = `group ${next.stream} ${next.group} is ${next.status}: ${next.reason}`;
  if (previous === undefined) {
    if (bad) to.logger.warn(fields, words);
    return;
  }
  to.logger[bad ? "warn" : "info"](fields, `${words} (was ${previous.status})`);
  if (!to.isLeader()) return;
  to.writeEvent({
    type: "status-changed",
    at: announcement.atMs,
    stream: next.stream,
    group: next.group,
    detail: { from: previous.status, to: next.status, reason: next.reason },
  });
}
