import type { GroupChange } from "../core/GroupSet.js";
import type { GroupSweepResult } from "../sweep/GroupSweepResult.js";
import { SweepRing } from "./SweepRing.js";

/**
 * The Supervisor's typed outcomes (src/daemon/SupervisorEvents.ts) the log listens to, named
 * here so the console does not depend on the daemon that composes it.
 */
interface SweepOutcomes {
  on(
    event: "group-swept" | "group-failed",
    listener: (result: GroupSweepResult, wallClockMs: number) => void,
  ): unknown;
  on(event: "groups-changed", listener: (change: GroupChange) => void): unknown;
}

/** One group's sweep as the console shows it. */
export interface SweepRecord {
  stream: string;
  group: string;
  /** Wall clock (Unix ms) when the sweep ended. */
  atMs: number;
  durationMs: number;
  claimed: number;
  requeued: number;
  reassigned: number;
  deadLettered: number;
  ghosts: number;
  complete: boolean;
  error?: string;
}

/** A sweep that claimed, moved or cleared something, or failed. */
function didWork(sweep: SweepRecord): boolean {
  const { claimed, requeued, reassigned, deadLettered, ghosts } = sweep;
  return sweep.error !== undefined || claimed + requeued + reassigned + deadLettered + ghosts > 0;
}

/** How many recent sweeps the sweeper page lists. */
export const RECENT_SWEEPS = 50;

/**
 * The leader's recent sweeps, from the Supervisor's typed outcomes (as recordSweep.ts does for
 * the counters): a bounded ring of the last RECENT_SWEEPS, and the last sweep of each group for
 * the overview. Memory is bounded by the groups: removed groups are forgotten. On a standby
 * nothing arrives, and the pages say so.
 */
export class SweepLog {
  private readonly all: SweepRing<SweepRecord>;
  /** The sweeps that did work (or failed), apart: idle sweeps of many groups would push them out. */
  private readonly worked: SweepRing<SweepRecord>;
  private readonly lastByGroup = new Map<string, Map<string, SweepRecord>>();

  constructor(capacity = RECENT_SWEEPS) {
    this.all = new SweepRing(capacity);
    this.worked = new SweepRing(capacity);
  }

  follow(supervisor: SweepOutcomes): void {
    const record = (result: GroupSweepResult, wallClockMs: number): void =>
      this.add(result, wallClockMs);
    supervisor.on("group-swept", record);
    supervisor.on("group-failed", record);
    supervisor.on("groups-changed", (change) => this.forget(change));
  }

  add(result: GroupSweepResult, wallClockMs: number): void {
    const entry: SweepRecord = {
      stream: result.stream,
      group: result.group,
      atMs: wallClockMs,
      durationMs: result.durationMs,
      claimed: result.claimed,
      requeued: result.requeued,
      reassigned: result.reassigned,
      deadLettered: result.deadLettered,
      ghosts: result.ghosts,
      complete: result.complete,
      ...(result.error === undefined ? {} : { error: result.error }),
    };
    this.all.push(entry);
    if (didWork(entry)) this.worked.push(entry);
    let groups = this.lastByGroup.get(entry.stream);
    if (groups === undefined) {
      groups = new Map();
      this.lastByGroup.set(entry.stream, groups);
    }
    groups.set(entry.group, entry);
  }

  /** Newest first; `workedOnly`: the last sweeps that did work or failed (`/ui/sweeper?worked=1`). */
  recent(options: { workedOnly?: boolean } = {}): SweepRecord[] {
    return (options.workedOnly === true ? this.worked : this.all).newestFirst();
  }

  lastOf(stream: string, group: string): SweepRecord | undefined {
    return this.lastByGroup.get(stream)?.get(group);
  }

  private forget(change: GroupChange): void {
    for (const { stream, group } of change.removed) {
      const groups = this.lastByGroup.get(stream);
      groups?.delete(group);
      if (groups?.size === 0) this.lastByGroup.delete(stream);
    }
  }
}
