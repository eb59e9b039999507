/** Progress of a long operation; silent unless stderr is a terminal. */
export interface Progress {
  start(total: number): void;
  update(done: number): void;
  stop(): void;
}
