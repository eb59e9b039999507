import type { GroupChange } from "../core/GroupSet.js";
import type { GroupSweepResult } from "../sweep/GroupSweepResult.js";

/**
 * What the supervisor's passes did, as typed events (graphile-worker style): metrics, logs and
 * the scrape refresher subscribe instead of being called by the loop. A group removed while a
 * pass ran gets no event: its series must not come back.
 */
export interface SupervisorEvents {
  /** The list of groups changed (reload, discovery): cursors of removed groups are gone. */
  "groups-changed": [change: GroupChange];
  /**
   * A group's sweep that ran (a page, or nothing left to do) without error; when the pass ended
   * on the host's clock (the console's ages) and on Redis TIME (the exported timestamp).
   */
  "group-swept": [result: GroupSweepResult, wallClockMs: number, redisClockMs: number];
  /** A group's sweep that ended in an error; the counts say what was done before it. */
  "group-failed": [result: GroupSweepResult, wallClockMs: number, redisClockMs: number];
  /** A sweep changed the group's PEL (claimed or found ghosts): gauges read from it are stale. */
  "group-changed": [groupId: string];
  /** The pass ended (maintenance included), with every group's result. */
  "pass-finished": [results: readonly GroupSweepResult[]];
}
