/**
 * A deadline for a wait on another process, a socket or a timer on a machine that may be busy:
 * only there to fail a test that would otherwise wait for something much slower (a client's
 * default timeout, a retry loop, for ever), never a margin a passing run depends on. What ended
 * the wait is checked by its cause where it has one (an error's words, an exit code, an event).
 */
export const HANG_DEADLINE_MS = 15_000;
