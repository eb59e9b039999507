import type { ParseArgsConfig } from "node:util";
import type { Interruption } from "./Interruption.js";

export type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig["options"]>;

export type OptionValues = Record<string, string | boolean | string[] | undefined>;

/** Where a command writes. */
export interface CommandIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WriteStream;
}

/**
 * One command of the CLI, daemon (`run`, `sweep`, `status`, `check-config`) or operator
 * (`inspect`, `dlq redrive`, ...): its words, its options, its help, and what it does. Every
 * command is dispatched the same way (runCommand). The module that declares one stays light:
 * execute() imports the code that does the work only when the command runs, so `--help` and
 * usage errors load none of it.
 */
export interface Command {
  /** The words after `stream-janitor`. */
  readonly words: readonly string[];
  /** One line for the overall usage. */
  readonly synopsis: string;
  /** The `--help` text: what it does, its options, examples. */
  readonly help: string;
  readonly options: ParseArgsOptionsConfig;
  /**
   * True when execute() watches the interruption's signal, stops at a page boundary and prints
   * what it did; otherwise an interrupted command also says that it did not finish.
   */
  readonly stopsOnSignal?: boolean;
  /**
   * True for `run`: the daemon stops gracefully on SIGINT/SIGTERM by itself (exit 0), so it runs
   * without an Interruption (execute gets undefined).
   */
  readonly ownsSignals?: boolean;
  /**
   * The name under which the one word after the command's words lands in its values (`dlq cancel
   * TASK`: "task"); undefined: the command takes no such word.
   */
  readonly positional?: string;
  /** Checks the options before anything loads or connects; throws UsageError. */
  validate?(values: OptionValues): void;
  execute(
    values: OptionValues,
    io: CommandIo,
    interruption: Interruption | undefined,
  ): Promise<number>;
}

/** Bad command-line usage: exit 2 with the command's help. */
export class UsageError extends Error {
  override name = "UsageError";
}
