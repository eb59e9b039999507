/**
 * The timer functions the loops use (lease, periodic tasks); injectable so tests drive time and
 * can prove that none is left behind.
 */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/**
 * Real timers that never keep the process alive on their own (the HTTP server does that): for
 * background work such as PEL scans and discovery.
 */
export const backgroundTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => {
    clearTimeout(handle as NodeJS.Timeout);
  },
};
