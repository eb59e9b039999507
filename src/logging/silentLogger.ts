import type { Logger } from "pino";

/** What a Redis connection logs: its trouble (warn) and its recovery (info). */
export type ConnectionLogger = Pick<Logger, "warn" | "info">;

/**
 * For a connection whose trouble the command says itself, in words, once it fails (the operator
 * commands): a logger that says nothing, without loading pino. pino costs about 50 ms of a
 * one-shot command's start-up (test/bench/RESULTS.md "CLI start-up, issue 33 item 11").
 */
export const silentLogger: ConnectionLogger = {
  warn: () => undefined,
  info: () => undefined,
};
