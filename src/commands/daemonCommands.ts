import { ConfigError } from "../config/ConfigError.js";
import { DURATION_FORM, parseDuration } from "../config/parseDuration.js";
import type { JanitorConfig } from "../core/configTypes.js";
import {
  UsageError,
  type Command,
  type CommandIo,
  type OptionValues,
  type ParseArgsOptionsConfig,
} from "./Command.js";
import { DAEMON_COMMAND_HELP, type DaemonCommandHelp } from "./daemonCommandHelp.js";
import { EXIT } from "./exitCodes.js";
import type { Interruption } from "./Interruption.js";
import { requireConfigSource } from "./requireConfigSource.js";

const OPTION_TYPES: ParseArgsOptionsConfig = {
  json: { type: "boolean" },
  offline: { type: "boolean" },
  url: { type: "string" },
  window: { type: "string" },
};

/** The options of a daemon command: --config, --help, --version and the ones it takes. */
function optionsOf(help: DaemonCommandHelp): ParseArgsOptionsConfig {
  const own = Object.fromEntries(help.options.map((name) => [name, OPTION_TYPES[name]]));
  return {
    config: { type: "string", short: "c" },
    help: { type: "boolean", short: "h" },
    version: { type: "boolean" },
    ...own,
  };
}

/**
 * Loads the configuration as every daemon command does (a bad one exits 78 naming the key),
 * then runs. `run` and `sweep` also refuse a configuration with nothing to do.
 */
async function withConfig(
  values: OptionValues,
  io: CommandIo,
  requireWork: boolean,
  run: (config: JanitorConfig, load: () => Promise<JanitorConfig>) => Promise<number>,
): Promise<number> {
  let config;
  let load;
  try {
    const configPath = typeof values.config === "string" ? values.config : undefined;
    requireConfigSource(configPath, process.env);
    const [{ loadConfig }, { checkHasWork }] = await Promise.all([
      import("../config/loadConfig.js"),
      import("../config/checkHasWork.js"),
    ]);
    load = () => loadConfig({ configPath, env: process.env });
    config = await load();
    if (requireWork) checkHasWork(config);
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr.write(`stream-janitor: ${error.message}\n`);
      return EXIT.config;
    }
    throw error;
  }
  return run(config, load);
}

/** `status --window`: how long the command samples by itself (default 2 s); undefined if bad. */
function statusWindowMs(value: OptionValues[string]): number | undefined {
  if (value === undefined) return 2000;
  const ms = parseDuration(value);
  return ms !== undefined && ms >= 100 && ms <= 60_000 ? ms : undefined;
}

/** The words, synopsis, help and options of a daemon command. */
function describedAs(word: string): Pick<Command, "words" | "synopsis" | "help" | "options"> {
  const help = DAEMON_COMMAND_HELP[word] as DaemonCommandHelp;
  return { words: [word], synopsis: help.synopsis, help: help.help, options: optionsOf(help) };
}

/** The one-shot commands run under the dispatcher's Interruption (only `run` owns its signals). */
function interruptible(interruption: Interruption | undefined): Interruption {
  if (interruption === undefined) throw new Error("a one-shot command runs interruptible");
  return interruption;
}

const runCommand: Command = {
  ...describedAs("run"),
  ownsSignals: true,
  execute: (values, io) =>
    withConfig(values, io, true, async (config, load) => {
      const { runDaemonCommand } = await import("./runDaemonCommand.js");
      return runDaemonCommand(config, { reload: load });
    }),
};

const sweepCommand: Command = {
  ...describedAs("sweep"),
  // It stops at a page boundary, releases the lease and prints what it did.
  stopsOnSignal: true,
  execute: (values, io, interruption) =>
    withConfig(values, io, true, async (config) => {
      const { runSweepCommand } = await import("./runSweepCommand.js");
      const json = values.json === true;
      return runSweepCommand(config, { json, interruption: interruptible(interruption) });
    }),
};

const checkConfigCommand: Command = {
  ...describedAs("check-config"),
  execute: (values, io, interruption) =>
    withConfig(values, io, false, async (config) => {
      const { runCheckConfigCommand } = await import("./runCheckConfigCommand.js");
      const offline = values.offline === true;
      return runCheckConfigCommand(config, { offline, interruption: interruptible(interruption) });
    }),
};

const statusCommand: Command = {
  ...describedAs("status"),
  validate(values) {
    if (statusWindowMs(values.window) === undefined) {
      throw new UsageError(
        `--window expects a duration from 100ms to 1m (${DURATION_FORM}), got ${String(values.window)}`,
      );
    }
  },
  execute: (values, io, interruption) =>
    withConfig(values, io, false, async (config) => {
      const { runStatusCommand } = await import("./runStatusCommand.js");
      return runStatusCommand(config, {
        json: values.json === true,
        url: typeof values.url === "string" ? values.url : undefined,
        windowMs: statusWindowMs(values.window) ?? 2000,
        signal: interruptible(interruption).signal,
      });
    }),
};

/** run, sweep, check-config and status, in the order of the usage. */
export const DAEMON_COMMANDS: readonly Command[] = [
  runCommand,
  sweepCommand,
  checkConfigCommand,
  statusCommand,
];
