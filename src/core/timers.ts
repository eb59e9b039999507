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
 * Resolves after `ms`, or as soon as any of `signals` aborts (never rejects: callers re-check
 * their state). Hand-written rather than AbortSignal.any, whose combined signals leaked on Node 20.
 */
export function sleep(timers: Timers, ms: number, signals: readonly AbortSignal[]): Promise<void> {
  return new Promise((resolve) => {
    if (signals.some((signal) => signal.aborted)) {
      resolve();
      return;
    }
    const finish = (): void => {
      timers.clearTimeout(handle);
      for (const signal of signals) signal.removeEventListener("abort", finish);
      resolve();
    };
    const handle = timers.setTimeout(finish, Math.max(0, ms));
    for (const signal of signals) signal.addEventListener("abort", finish, { once: true });
  });
}

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
