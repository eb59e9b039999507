#!/usr/bin/env node
// Start-up time is module loading: this file imports only what reads the arguments, the help
// texts and the option specs. The code a command runs (configuration loading, the Redis client,
// the logger, metrics, the lease) is imported once the command is known, and only its own.
import type { Command } from "./commands/Command.js";
import { DAEMON_COMMANDS } from "./commands/daemonCommands.js";
import { EXIT } from "./commands/exitCodes.js";
import { OPERATOR_CLI_COMMANDS } from "./commands/operator/runOperatorCommand.js";
import { readVersion } from "./commands/readVersion.js";
import { commandUsage, runCommand } from "./commands/runCommand.js";

/** Every command of the CLI, dispatched alike (runCommand), in the order of the usage. */
const COMMANDS: readonly Command[] = [...DAEMON_COMMANDS, ...OPERATOR_CLI_COMMANDS];

const USAGE = `Usage:
${commandUsage(COMMANDS)}
  stream-janitor --version | --help
  stream-janitor COMMAND --help                 the options of one command, with examples

The config file comes from --config or STREAM_JANITOR_CONFIG (YAML or JSON); one is required.
Exit codes: 0 ok, 1 runtime failure, 2 usage, 75 lease held elsewhere (sweep), 78 bad configuration,
130/143 interrupted by SIGINT/SIGTERM (run stops gracefully on either, exit 0).`;

async function main(argv: string[]): Promise<number> {
  const code = await runCommand(COMMANDS, argv, process);
  if (code !== undefined) return code;
  // No command: the CLI's own options, or a usage error.
  const [first] = argv;
  if (first === "--help" || first === "-h") {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (first === "--version") {
    process.stdout.write(`${readVersion()}\n`);
    return EXIT.ok;
  }
  const problem = first === undefined ? "missing command" : `unexpected argument: ${first}`;
  process.stderr.write(`stream-janitor: ${problem}\n\n${USAGE}\n`);
  return EXIT.usage;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `stream-janitor: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = EXIT.failure;
  },
);
