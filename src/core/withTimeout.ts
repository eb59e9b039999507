import { realTimers, type Timers } from "./timers.js";

/**
 * The one race of a call against a timer: the call's answer (or failure), or what `onTimeout`
 * returns (or throws) once `ms` have passed first. The timer is cleared as soon as the race is
 * settled, so none is left behind; a failure of the call after the time is up is dropped, since
 * the call cannot be recalled and its failure must not surface as an unhandled rejection.
 * `timers`: background timers where the wait must not keep the process alive; tests inject theirs.
 */
export async function withTimeout<T, U>(
  call: Promise<T>,
  ms: number,
  onTimeout: () => U,
  timers: Timers = realTimers,
): Promise<T | U> {
  let handle: unknown;
  const timeUp = new Promise<U>((resolve) => {
    // Adopting a promise of onTimeout's outcome: a throw in it rejects the race.
    handle = timers.setTimeout(() => resolve(Promise.resolve().then(onTimeout)), ms);
  });
  try {
    return await Promise.race([call, timeUp]);
  } finally {
    timers.clearTimeout(handle);
    call.catch(() => undefined);
  }
}
