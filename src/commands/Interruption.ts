/** Exit codes of an interrupted one-shot command: 128 + the signal's number, as shells report. */
const SIGNAL_EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;

export type StopSignal = keyof typeof SIGNAL_EXIT_CODES;

/**
 * SIGINT and SIGTERM for a one-shot command (sweep, check-config, the operator commands): the
 * first one aborts `signal`, so the command stops at its next safe point and prints what it did;
 * a second one exits at once. The command then exits 130 (SIGINT) or 143 (SIGTERM), all alike
 * (README "Running it"). `run` has its own handling: there a signal is the normal, graceful stop.
 */
export class Interruption {
  private readonly controller = new AbortController();
  private received: StopSignal | undefined;
  private readonly handlers: [StopSignal, () => void][];

  constructor(onFirst: (signal: StopSignal) => void = () => undefined) {
    this.handlers = (Object.keys(SIGNAL_EXIT_CODES) as StopSignal[]).map((name) => {
      const handler = (): void => {
        if (this.received !== undefined) process.exit(SIGNAL_EXIT_CODES[this.received]);
        this.received = name;
        this.controller.abort();
        onFirst(name);
      };
      process.on(name, handler);
      return [name, handler];
    });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The first signal received, if any. */
  get signalName(): StopSignal | undefined {
    return this.received;
  }

  /** 130 or 143 once a signal arrived, else `code`. */
  exitCode(code: number): number {
    return this.received === undefined ? code : SIGNAL_EXIT_CODES[this.received];
  }

  /** Resolves when a signal arrives (never otherwise). */
  whenInterrupted(): Promise<StopSignal> {
    return new Promise((resolve) => {
      const settle = (): void => resolve(this.received ?? "SIGTERM");
      if (this.signal.aborted) settle();
      else this.signal.addEventListener("abort", settle, { once: true });
    });
  }

  dispose(): void {
    for (const [name, handler] of this.handlers) process.off(name, handler);
  }
}
