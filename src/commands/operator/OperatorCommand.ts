import { DURATION_FORM, parseDuration } from "../../config/parseDuration.js";
import type { JanitorConfig } from "../../core/configTypes.js";
import type { ScriptedRedis } from "../../scripts/scriptedRedis.js";
import { UsageError, type OptionValues, type ParseArgsOptionsConfig } from "../Command.js";

/** What a command gets: the configuration, a connection, and where to write. */
export interface OperatorSession {
  config: JanitorConfig;
  redis: ScriptedRedis;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WriteStream;
  /** Aborted by SIGINT/SIGTERM: a command that pages stops at its next page boundary. */
  signal: AbortSignal;
}

/** What a command does, once its options are checked and a connection is open. */
export type OperatorRun = (values: OptionValues, session: OperatorSession) => Promise<number>;

/**
 * One operator verb: its words (`dlq redrive`), its options, its help, and what it does once
 * connected. The CLI dispatches it as a Command (OPERATOR_CLI_COMMANDS, runOperatorCommand.ts), which loads the
 * configuration and connects first. The module that declares one stays light (help, options,
 * checks): its run() imports the code that does the work only when the command runs, so
 * `--help` and usage errors load none of it.
 */
export interface OperatorCommand {
  /** The words after `stream-janitor`. */
  readonly words: readonly string[];
  /** One line for the overall usage. */
  readonly synopsis: string;
  /** The `--help` text: what it does, its options, examples. */
  readonly help: string;
  readonly options: ParseArgsOptionsConfig;
  /**
   * True when run() watches session.signal, stops at a page boundary and prints what it did;
   * otherwise a signal ends the command where it waits (each of its writes is one script).
   */
  readonly stopsOnSignal?: boolean;
  /** As Command's: the name the one word after the verb is given in the values. */
  readonly positional?: string;
  /** Checks the options before anything connects; throws UsageError. */
  validate?(values: OptionValues): void;
  run: OperatorRun;
}

/** A run() that imports the module doing the work on its first call (see OperatorCommand). */
export function runFrom(load: () => Promise<OperatorRun>): OperatorRun {
  return async (values, session) => (await load())(values, session);
}

/** Refused or failed at run time: exit 1 with the message. */
export class OperatorFailure extends Error {
  override name = "OperatorFailure";
}

export const COMMON_OPTIONS: ParseArgsOptionsConfig = {
  config: { type: "string", short: "c" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
};

export const COMMON_HELP = `  -c, --config FILE   configuration (else STREAM_JANITOR_CONFIG; one is required)
      --json          print one JSON object on stdout
  -h, --help          this help`;

export function requiredString(values: OptionValues, name: string): string {
  const value = values[name];
  if (typeof value !== "string" || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

/** A non-negative integer option, or undefined when absent. */
export function integerOption(values: OptionValues, name: string, min = 0): number | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !/^\d+$/u.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`--${name} expects an integer >= ${min}, got ${String(value)}`);
  }
  const number = Number(value);
  if (number < min) throw new UsageError(`--${name} expects an integer >= ${min}, got ${value}`);
  return number;
}

/**
 * A duration option (`--idle 1h`), or its older spelling in milliseconds (`--idle-ms 3600000`):
 * both take what parseDuration reads. Undefined when neither is given.
 */
export function durationOption(
  values: OptionValues,
  name: string,
  olderName: string,
  min = 0,
): number | undefined {
  const given = [name, olderName].filter((option) => values[option] !== undefined);
  if (given.length > 1) throw new UsageError(`give --${name} or --${olderName}, not both`);
  const [option] = given;
  if (option === undefined) return undefined;
  const value = values[option];
  const ms = parseDuration(value);
  if (ms === undefined || ms < min) {
    const bound = min > 0 ? ` of at least ${min} ms` : "";
    throw new UsageError(`--${option} expects ${DURATION_FORM}${bound}, got ${String(value)}`);
  }
  return ms;
}

export function writeJson(session: OperatorSession, value: unknown): void {
  session.stdout.write(`${JSON.stringify(value)}\n`);
}
