/** Exit codes (README "Running it"; 75 and 78 are EX_TEMPFAIL and EX_CONFIG from sysexits.h). */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  leaseHeld: 75,
  config: 78,
} as const;
