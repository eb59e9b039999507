#!/usr/bin/env node
// Start-up time is module loading: this file imports only what reads the arguments, the help
// texts and the option specs. The code a command runs (configuration loading, the Redis client,
// the logger, metrics, the lease) is imported once the command is known, and only its own.
import { parseArgs } from "node:util";
import { ConfigError } from "./config/ConfigError.js";
import { DURATION_FORM, parseDuration } from "./config/parseDuration.js";
import { DAEMON_COMMAND_HELP } from "./commands/daemonCommandHelp.js";
import { EXIT } from "./commands/exitCodes.js";
import { Interruption } from "./commands/Interruption.js";
import { readVersion } from "./commands/readVersion.js";
import { requireConfigSource } from "./commands/requireConfigSource.js";
import { OPERATOR_USAGE, runOperatorCommand } from "./commands/operator/runOperatorCommand.js";
import type { JanitorConfig } from "./core/configTypes.js";

const DAEMON_USAGE = Object.entries(DAEMON_COMMAND_HELP)
  .map(([, command]) => `  stream-janitor ${command.synopsis}`)
  .join("\n");

const USAGE = `Usage:
${DAEMON_USAGE}
${OPERATOR_USAGE}
  stream-janitor --version | --help
  stream-janitor COMMAND --help                 the options of one command, with examples

The config file comes from --config or STREAM_JANITOR_CONFIG (YAML or JSON); one is required.
Exit codes: 0 ok, 1 runtime failure, 2 usage, 75 lease held elsewhere (sweep), 78 bad configuration,
130/143 interrupted by SIGINT/SIGTERM (run stops gracefully on either, exit 0).`;

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
        offline: { type: "boolean" },
        url: { type: "string" },
        window: { type: "string" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean" },
      },
    });
  } catch (error) {
    process.stderr.write(
      `stream-janitor: ${error instanceof Error ? error.message : String(error)}\n\n${usageOf(argv[0])}\n`,
    );
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  const [command, ...extra] = positionals;
  const known = command === undefined ? undefined : DAEMON_COMMAND_HELP[command];
  if (values.help === true) {
    process.stdout.write(`${known?.help ?? USAGE}\n`);
    return EXIT.ok;
  }
  if (values.version === true) {
    process.stdout.write(`${readVersion()}\n`);
    return EXIT.ok;
  }
  if (command === undefined || known === undefined || extra.length > 0) {
    const problem =
      command === undefined ? "missing command" : `unexpected argument: ${extra[0] ?? command}`;
    process.stderr.write(`stream-janitor: ${problem}\n\n${known?.help ?? USAGE}\n`);
    return EXIT.usage;
  }
  for (const option of ["json", "offline", "url", "window"] as const) {
    if (values[option] !== undefined && !known.options.includes(option)) {
      process.stderr.write(
        `stream-janitor ${command}: unknown option --${option}\n\n${known.help}\n`,
      );
      return EXIT.usage;
    }
  }
  const windowMs = statusWindowMs(values.window);
  if (windowMs === undefined) {
    process.stderr.write(
      `stream-janitor ${command}: --window expects a duration from 100ms to 1m (${DURATION_FORM}), got ${values.window}\n\n${known.help}\n`,
    );
    return EXIT.usage;
  }

  let config;
  let load;
  try {
    requireConfigSource(values.config, process.env);
    const [{ loadConfig }, { checkHasWork }] = await Promise.all([
      import("./config/loadConfig.js"),
      import("./config/checkHasWork.js"),
    ]);
    load = () => loadConfig({ configPath: values.config, env: process.env });
    config = await load();
    if (command === "run" || command === "sweep") checkHasWork(config);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`stream-janitor: ${error.message}\n`);
      return EXIT.config;
    }
    throw error;
  }
  if (command === "run") {
    const { runDaemonCommand } = await import("./commands/runDaemonCommand.js");
    return runDaemonCommand(config, { reload: load });
  }
  const run =
    command === "sweep"
      ? await loadSweep(values.json === true)
      : command === "status"
        ? await loadStatus(values.json === true, values.url, windowMs)
        : await loadCheckConfig(values.offline === true);
  // The one-shot commands exit 130 (SIGINT) or 143 (SIGTERM) when interrupted, all alike.
  const interruption = new Interruption();
  try {
    const code = await run(config, interruption);
    if (interruption.signalName !== undefined && command !== "sweep") {
      process.stderr.write(
        `stream-janitor ${command}: interrupted by ${interruption.signalName} before it finished\n`,
      );
    }
    return interruption.exitCode(code);
  } finally {
    interruption.dispose();
  }
}

type OneShot = (config: JanitorConfig, interruption: Interruption) => Promise<number>;

async function loadSweep(json: boolean): Promise<OneShot> {
  const { runSweepCommand } = await import("./commands/runSweepCommand.js");
  return (config, interruption) => runSweepCommand(config, { json, interruption });
}

async function loadCheckConfig(offline: boolean): Promise<OneShot> {
  const { runCheckConfigCommand } = await import("./commands/runCheckConfigCommand.js");
  return (config, interruption) => runCheckConfigCommand(config, { offline, interruption });
}

async function loadStatus(
  json: boolean,
  url: string | undefined,
  windowMs: number,
): Promise<OneShot> {
  const { runStatusCommand } = await import("./commands/runStatusCommand.js");
  return (config, interruption) =>
    runStatusCommand(config, { json, url, windowMs, signal: interruption.signal });
}

/** `status --window`: how long the command samples by itself (default 2 s); undefined if bad. */
function statusWindowMs(value: string | undefined): number | undefined {
  if (value === undefined) return 2000;
  const ms = parseDuration(value);
  return ms !== undefined && ms >= 100 && ms <= 60_000 ? ms : undefined;
}

/** The usage to show after a parse error: the command's own when argv starts with one. */
function usageOf(command: string | undefined): string {
  return (command === undefined ? undefined : DAEMON_COMMAND_HELP[command]?.help) ?? USAGE;
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
