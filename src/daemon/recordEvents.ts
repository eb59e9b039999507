import type { EventEmitter } from "node:events";
import type { AdvisoryEvent, EventWriter } from "../events/EventWriter.js";
import type { LeaseEvents } from "../lease/types.js";
import type { MaintenanceEvents } from "../maintenance/MaintenanceEvents.js";
import type { GroupSweepResult } from "../sweep/GroupSweepResult.js";
import type { SupervisorEvents } from "./SupervisorEvents.js";

type Events = Pick<EventWriter, "write">;

/**
 * Subscribes the advisory events to a supervisor's outcomes: per group and sweep, one event per
 * action that moved anything (README "Configuration", `events.*`). Failed sweeps report what they did before
 * the error too. Writes are fire-and-forget: the pass never waits for them.
 */
export function recordSweepEvents(
  supervisor: EventEmitter<SupervisorEvents>,
  events: Events,
): void {
  const record = (result: GroupSweepResult): void => {
    for (const event of sweepEvents(result)) events.write(event);
  };
  supervisor.on("group-swept", record);
  supervisor.on("group-failed", record);
}

/** The events of one group's sweep: only the actions with a count above 0. */
function sweepEvents(result: GroupSweepResult): AdvisoryEvent[] {
  const { stream, group } = result;
  const events: AdvisoryEvent[] = [];
  if (result.requeued > 0) {
    const ids = result.requeuedIds;
    events.push({ type: "requeued", stream, group, count: result.requeued, ids });
  }
  if (result.reassigned > 0) {
    const detail = { leftPending: result.leftPending };
    const ids = result.reassignedIds;
    events.push({ type: "reassigned", stream, group, count: result.reassigned, ids, detail });
  }
  if (result.deadLettered > 0) {
    const detail = {
      maxDeliveries: result.deadLetteredMaxDeliveries,
      action: result.deadLetteredAction,
      maxIdle: result.deadLetteredMaxIdle,
    };
    const ids = result.deadLetteredIds;
    events.push({ type: "dead-lettered", stream, group, count: result.deadLettered, ids, detail });
  }
  if (result.ghosts > 0) {
    events.push({ type: "ghosts", stream, group, count: result.ghosts, ids: result.ghostIds });
  }
  if (result.deadLettersDropped > 0) {
    const count = result.deadLettersDropped;
    events.push({ type: "dead-letters-dropped", stream, group, count });
  }
  const retryLane = result.retryLaneRecreated;
  if (retryLane !== undefined) {
    events.push({ type: "retry-lane-group-recreated", stream, group, detail: { retryLane } });
  }
  return events;
}

/** Lease changes as events: acquired with its fencing token, lost with the reason. */
export function recordLeaseEvents(lease: EventEmitter<LeaseEvents>, events: Events): void {
  lease.on("acquired", (term) => {
    events.write({ type: "lease-acquired", detail: { fencingToken: term.fencingToken } });
  });
  lease.on("lost", (reason, term) => {
    events.write({ type: "lease-lost", detail: { reason, fencingToken: term.fencingToken } });
  });
}

/** A maintenance pass's work as events: the consumers it reaped, the streams it trimmed. */
export function recordMaintenanceEvents(
  maintenance: EventEmitter<MaintenanceEvents>,
  events: Events,
): void {
  maintenance.on("consumers-reaped", ({ stream, group, consumers, idleMs }) => {
    const count = consumers.length;
    const detail = { consumers, idleMs };
    events.write({ type: "consumers-reaped", stream, group, count, ids: consumers, detail });
  });
  maintenance.on("trimmed", ({ stream, maxLen, maxAgeMs, removed, length, blockedBy }) => {
    const detail = { maxLen, maxAgeMs, length, heldBackBy: blockedBy };
    events.write({ type: "trimmed", stream, count: removed, detail });
  });
}
