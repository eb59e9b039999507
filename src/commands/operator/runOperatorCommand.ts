import { parseArgs } from "node:util";
import { EXIT } from "../exitCodes.js";
import { Interruption } from "../Interruption.js";
import { consumersReapCommand } from "./consumersReapCommand.js";
import { dlqListCommand } from "./dlqListCommand.js";
import { dlqPurgeCommand } from "./dlqPurgeCommand.js";
import { dlqRedriveCommand } from "./dlqRedriveCommand.js";
import { eventsCommand } from "./eventsCommand.js";
import { inspectCommand } from "./inspectCommand.js";
import type { OperatorCommand, OptionValues } from "./OperatorCommand.js";
import { trimCommand } from "./trimCommand.js";

export const OPERATOR_COMMANDS: readonly OperatorCommand[] = [
  inspectCommand,
  dlqListCommand,
  dlqRedriveCommand,
  dlqPurgeCommand,
  consumersReapCommand,
  trimCommand,
  eventsCommand,
];

/** Lines for the CLI's overall usage. */
export const OPERATOR_USAGE = OPERATOR_COMMANDS.map((c) => `  stream-janitor ${c.synopsis}`).join(
  "\n",
);

/** Commands with sub-commands (`dlq`, `consumers`): their first word alone. */
const GROUP_WORDS = new Set(
  OPERATOR_COMMANDS.filter((c) => c.words.length > 1).map((c) => c.words[0]),
);

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
    // Loaded only now: configuration loading, the logger and the Redis client are the bulk of
    // the start-up, and --help or a usage error needs none of them.
    const { connectAndRun } = await import("./connectAndRun.js");
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
