import type { Command } from "./Command.js";
import { DAEMON_COMMANDS } from "./daemonCommands.js";
import { EXIT } from "./exitCodes.js";
import { OPERATOR_CLI_COMMANDS } from "./operator/runOperatorCommand.js";
import { commandUsage, runCommand } from "./runCommand.js";

/** Every command of the CLI, dispatched alike (runCommand), in the order of the usage. */
const COMMANDS: readonly Command[] = [...DAEMON_COMMANDS, ...OPERATOR_CLI_COMMANDS];

const USAGE = `Usage:
${commandUsage(COMMANDS)}
  stream-janitor --version | --help
  stream-janitor COMMAND --help                 the options of one command, with examples

The config file comes from --config or STREAM_JANITOR_CONFIG (YAML or JSON); one is required.
Exit codes: 0 ok, 1 runtime failure, 2 usage, 75 lease held elsewhere (sweep), 78 bad configuration,
130/143 interrupted by SIGINT/SIGTERM (run stops gracefully on either, exit 0).`;

/** The CLI past `--version`: the command argv names, `--help`, or a usage error. */
export async function runCli(argv: readonly string[]): Promise<number> {
  const code = await runCommand(COMMANDS, argv, process);
  if (code !== undefined) return code;
  const [first] = argv;
  if (first === "--help" || first === "-h") {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const problem = first === undefined ? "missing command" : `unexpected argument: ${first}`;
  process.stderr.write(`stream-janitor: ${problem}\n\n${USAGE}\n`);
  return EXIT.usage;
}
