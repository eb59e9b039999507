import { parseArgs } from "node:util";
import type { Command, CommandIo, OptionValues } from "./Command.js";
import { EXIT } from "./exitCodes.js";
import { Interruption } from "./Interruption.js";
import { readVersion } from "./readVersion.js";

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const usageLines = (commands: readonly Command[]): string =>
  commands.map((c) => `  stream-janitor ${c.synopsis}`).join("\n");

/**
 * The one dispatch of the CLI: runs the command argv names, and resolves to its exit code;
 * resolves to undefined when argv names none (the caller prints the overall usage). A word that
 * groups sub-commands (`dlq`, `consumers`) alone, or with one it does not have, is a usage error.
 */
export async function runCommand(
  commands: readonly Command[],
  argv: readonly string[],
  io: CommandIo,
): Promise<number | undefined> {
  const [first, second] = argv;
  if (first === undefined) return undefined;
  const command = commands.find((c) => c.words.every((word, index) => argv[index] === word));
  if (command === undefined) {
    const choices = commands.filter((c) => c.words.length > 1 && c.words[0] === first);
    if (choices.length === 0) return undefined;
    const usage = usageLines(choices);
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
  const values = parseOptions(command, argv, io);
  if (typeof values === "number") return values;
  return execute(command, values, io);
}

/** The command's options, checked; or the exit code of --help, --version or a usage error. */
function parseOptions(
  command: Command,
  argv: readonly string[],
  io: CommandIo,
): OptionValues | number {
  try {
    const parsed = parseArgs({
      args: argv.slice(command.words.length),
      options: command.options,
      allowPositionals: command.positional !== undefined,
      strict: true,
    });
    const values = parsed.values as OptionValues;
    if (command.positional !== undefined) {
      if (parsed.positionals.length > 1) {
        throw new Error(`unexpected argument '${parsed.positionals[1] ?? ""}'`);
      }
      values[command.positional] = parsed.positionals[0];
    }
    if (values.help === true) {
      io.stdout.write(`${command.help}\n`);
      return EXIT.ok;
    }
    if (values.version === true) {
      io.stdout.write(`${readVersion()}\n`);
      return EXIT.ok;
    }
    command.validate?.(values);
    return values;
  } catch (error) {
    io.stderr.write(
      `stream-janitor ${command.words.join(" ")}: ${message(error)}\n\n${command.help}\n`,
    );
    return EXIT.usage;
  }
}

async function execute(command: Command, values: OptionValues, io: CommandIo): Promise<number> {
  if (command.ownsSignals === true) return command.execute(values, io, undefined);
  // From here a signal ends the command with 130 (SIGINT) or 143 (SIGTERM), all alike.
  const interruption = new Interruption();
  try {
    const code = await command.execute(values, io, interruption);
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

/** Lines for the CLI's overall usage, one per command. */
export function commandUsage(commands: readonly Command[]): string {
  return usageLines(commands);
}
