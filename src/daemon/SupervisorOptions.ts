import type { Logger } from "pino";
import type { GroupSource } from "../core/GroupSet.js";
import type { Timers } from "../core/timers.js";
import type { ResolvedGroup } from "../core/resolveGroup.js";
import type { LeaderTerm } from "../lease/types.js";
import type { Maintenance } from "../maintenance/Maintenance.js";
import type { ScriptedRedis } from "../scripts/scriptedRedis.js";

/** The sweep settings a reload may change while the daemon runs. */
export interface SweepSettings {
  intervalMs: number;
  batchSize: number;
  maxScriptMs: number;
  maxEntriesPerGroup: number;
  consumerName: string;
}

export interface SupervisorOptions extends SweepSettings {
  /** A fixed list, or a source whose changes (reload, discovery) are picked up at the next pass. */
  groups: readonly ResolvedGroup[] | GroupSource;
  redis: ScriptedRedis;
  logger: Logger;
  /** The current leadership term, or undefined on a standby. */
  currentTerm: () => LeaderTerm | undefined;
  /** Reaping and retention, run after each pass under the same fence. */
  maintenance?: Maintenance;
  random?: () => number;
  /** Monotonic ms for durations. */
  now?: () => number;
  /** The passes' timer; realTimers unless given. */
  timers?: Timers;
}
