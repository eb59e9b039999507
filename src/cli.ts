#!/usr/bin/env node
// Start-up time is module loading: `--version` answers before anything else loads; then the
// command specs (help texts, option checks) load, and the code a command runs (configuration
// loading, the Redis client, the logger, metrics, the lease) only once the command is known,
// and only its own.
import { EXIT } from "./commands/exitCodes.js";
import { readVersion } from "./commands/readVersion.js";

async function main(argv: string[]): Promise<number> {
  if (argv.length === 1 && argv[0] === "--version") {
    process.stdout.write(`${readVersion()}\n`);
    return EXIT.ok;
  }
  const { runCli } = await import("./commands/allCommands.js");
  return runCli(argv);
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
