import { parseArgs } from "node:util";
import { ConfigError } from "../../config/ConfigError.js";
import { loadConfig } from "../../config/loadConfig.js";
import { createLogger } from "../../logging/createLogger.js";
import { connectRedis } from "../../redis/connectRedis.js";
import { registerScripts } from "../../scripts/scriptedRedis.js";
import { EXIT } from "../exitCodes.js";
import { Interruption } from "../Interruption.js";
import { requireConfigSource } from "../requireConfigSource.js";
import { consumersReapCommand } from "./consumersReapCommand.js";
import { dlqListCommand } from "./dlqListCommand.js";
import { dlqPurgeCommand } from "./dlqPurgeCommand.js";
import { dlqRedriveCommand } from "./dlqRedriveCommand.js";
import { inspectCommand } from "./inspectCommand.js";
import {
  OperatorFailure,
  UsageError,
  type OperatorCommand,
  type OptionValues,
} from "./OperatorCommand.js";
import { trimCommand } from "./trimCommand.js";

export const OPERATOR_COMMANDS: readonly OperatorCommand[] = [
  inspectCommand,
  dlqListCommand,
  dlqRedriveCommand,
  dlqPurgeCommand,
  consumersReapCommand,
  trimCommand,
];

/** Lines for the CLI's overall usage. */
export const OPERATOR_USAGE = OPERATOR_COMMANDS.map((c) => `  stream-janitor ${c.synopsis}`).join(
  "\n",
);

/** Commands with sub-commands (`dlq`, `consumers`): their first word alone. */
const GROUP_WORDS = new Set(
  OPERATOR_COMMANDS.filter((c) => c.words.length > 1).map((c) => c.words[0]),
);

/** A Redis command may take this long; a page script is bounded to milliseconds. */
const COMMAND_TIMEOUT_MS = 30_000;

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs an operator command (inspect, dlq ..., consumers reap, trim) when argv names one, and
 * resolves to its exit code; resolves to undefined for anything else (the daemon's commands).
 * The operator commands never take the lease: each of their writes is one atomic, repeatable
 * script, safe next to a running daemon.
 */
export async function runOperatorCommand(
  argv: readonly string[],
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WriteStream } = process,
): Promise<number | undefined> {
  const [first, second] = argv;
  if (first === undefined) return undefined;
  const command = OPERATOR_COMMANDS.find((c) =>
    c.words.every((word, index) => argv[index] === word),
  );
  if (command === undefined) {
    if (!GROUP_WORDS.has(first)) return undefined;
    const choices = OPERATOR_COMMANDS.filter((c) => c.words[0] === first);
    const usage = choices.map((c) => `  stream-janitor ${c.synopsis}`).join("\n");
    if (second === "--help" || second === "-h") {
      io.stdout.write(
        `Usage:\n${usage}\n\nstream-janitor ${first} SUB-COMMAND --help for details.\n`,
      );
      return EXIT.ok;
    }
    const problem = second === undefined ? "missing sub-command" : `unknown sub-command ${second}`;
    io.stderr.write(`stream-janitor ${first}: ${problem}\n\nUsage:\n${usage}\n`);
    return EXIT.usage;
  }

  let values: OptionValues;
  try {
    const parsed = parseArgs({
      args: argv.slice(command.words.length),
      options: command.options,
      allowPositionals: false,
      strict: true,
    });
    values = parsed.values as OptionValues;
    if (values.help === true) {
      io.stdout.write(`${command.help}\n`);
      return EXIT.ok;
    }
    command.validate?.(values);
  } catch (error) {
    io.stderr.write(
      `stream-janitor ${command.words.join(" ")}: ${message(error)}\n\n${command.help}\n`,
    );
    return EXIT.usage;
  }

  // From here a signal ends the command with 130 (SIGINT) or 143 (SIGTERM), all alike.
  const interruption = new Interruption();
  try {
    const code = await connectAndRun(command, values, io, interruption);
    if (interruption.signalName !== undefined && command.stopsOnSignal !== true) {
      io.stderr.write(
        `stream-janitor ${command.words.join(" ")}: interrupted by ${interruption.signalName} before it finished\n`,
      );
    }
    return interruption.exitCode(code);
  } finally {
    interruption.dispose();
  }
}

async function connectAndRun(
  command: OperatorCommand,
  values: OptionValues,
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WriteStream },
  interruption: Interruption,
): Promise<number> {
  let config;
  try {
    const configPath = typeof values.config === "string" ? values.config : undefined;
    requireConfigSource(configPath, process.env);
    config = await loadConfig({ configPath, env: process.env });
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr.write(`stream-janitor: ${error.message}\n`);
      return EXIT.config;
    }
    throw error;
  }
  // Logs (connection trouble) go to stderr: stdout carries the result.
  const logger = createLogger(
    config.log.level === "info" ? "warn" : config.log.level,
    process.stderr,
  );
  const redis = registerScripts(
    connectRedis(config.redis, {
      connectionName: `stream-janitor:${command.words.join("-")}`,
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      logger,
    }),
  );
  const session = { config, redis, stdout: io.stdout, stderr: io.stderr };
  const running = command.run(values, { ...session, signal: interruption.signal });
  try {
    if (command.stopsOnSignal === true) return await running;
    // Nothing to stop at a page boundary: a signal ends the wait (for Redis, say) now.
    return await Promise.race([running, interruption.whenInterrupted().then(() => EXIT.failure)]);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`stream-janitor ${command.words.join(" ")}: ${error.message}\n`);
      return EXIT.usage;
    }
    const prefix = error instanceof OperatorFailure ? "" : "failed: ";
    io.stderr.write(`stream-janitor ${command.words.join(" ")}: ${prefix}${message(error)}\n`);
    return EXIT.failure;
  } finally {
    running.catch(() => undefined);
    redis.disconnect();
  }
}
