#!/usr/bin/env node
import { parseArgs } from "node:util";
import { ConfigError } from "./config/ConfigError.js";
import { formatEffectiveConfig } from "./config/formatEffectiveConfig.js";
import { loadConfig } from "./config/loadConfig.js";
import { checkHasWork } from "./config/checkHasWork.js";
import { runDaemonCommand } from "./commands/runDaemonCommand.js";
import { runSweepCommand } from "./commands/runSweepCommand.js";
import { EXIT } from "./commands/exitCodes.js";
import { readVersion } from "./commands/readVersion.js";
import { requireConfigSource } from "./commands/requireConfigSource.js";
import { OPERATOR_USAGE, runOperatorCommand } from "./commands/operator/runOperatorCommand.js";

const USAGE = `Usage:
  stream-janitor run [--config FILE]            the daemon: lease, periodic sweeps, /metrics /livez /readyz
  stream-janitor sweep [--config FILE] [--json] one sweep of every configured group, then exit
  stream-janitor check-config [--config FILE]   validate and print the effective configuration
${OPERATOR_USAGE}
  stream-janitor --version | --help
  stream-janitor COMMAND --help                 the options of one command, with examples

The config file comes from --config or STREAM_JANITOR_CONFIG (YAML or JSON).
Exit codes: 0 ok, 1 runtime failure, 2 usage, 75 lease held elsewhere (sweep), 78 bad configuration.`;

async function main(argv: string[]): Promise<number> {
  // The operator's commands (inspect, dlq, consumers, trim) parse their own options.
  const operatorExit = await runOperatorCommand(argv);
  if (operatorExit !== undefined) return operatorExit;
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        config: { type: "string", short: "c" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean" },
      },
    });
  } catch (error) {
    process.stderr.write(
      `stream-janitor: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}\n`,
    );
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (values.version === true) {
    process.stdout.write(`${readVersion()}\n`);
    return EXIT.ok;
  }
  const [command, ...extra] = positionals;
  const known = ["run", "sweep", "check-config"];
  if (command === undefined || !known.includes(command) || extra.length > 0) {
    const problem =
      command === undefined ? "missing command" : `unexpected argument: ${extra[0] ?? command}`;
    process.stderr.write(`stream-janitor: ${problem}\n\n${USAGE}\n`);
    return EXIT.usage;
  }
  if (values.json === true && command !== "sweep") {
    process.stderr.write(`stream-janitor: --json goes with sweep only\n\n${USAGE}\n`);
    return EXIT.usage;
  }

  const load = () => loadConfig({ configPath: values.config, env: process.env });
  let config;
  try {
    requireConfigSource(values.config, process.env);
    config = await load();
    if (command === "run" || command === "sweep") checkHasWork(config);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`stream-janitor: ${error.message}\n`);
      return EXIT.config;
    }
    throw error;
  }
  switch (command) {
    case "check-config":
      process.stdout.write(`${formatEffectiveConfig(config)}\n`);
      return EXIT.ok;
    case "sweep":
      return runSweepCommand(config, { json: values.json === true });
    default:
      return runDaemonCommand(config, { reload: load });
  }
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
