import type { TrimBlocker } from "../scripts/safeTrim.js";

/**
 * What a maintenance pass did, as typed events (as the supervisor reports its sweeps): the
 * advisory events and anyone else subscribe instead of being called by the pass. Only work that
 * changed something is reported.
 */
export interface MaintenanceEvents {
  /** Consumers of a group deleted because they owned nothing and were idle `idleMs`. */
  "consumers-reaped": [
    outcome: { stream: string; group: string; consumers: string[]; idleMs: number },
  ];
  /** A retention stream trimmed: `removed` entries, `length` left, who held the rest back. */
  trimmed: [
    outcome: {
      stream: string;
      maxLen: number;
      maxAgeMs: number;
      removed: number;
      length: number;
      blockedBy: TrimBlocker[];
    },
  ];
}
