import type { Command, CommandIo } from "../Command.js";
import { runCommand } from "../runCommand.js";
import { consumersReapCommand } from "./consumersReapCommand.js";
import { dlqListCommand } from "./dlqListCommand.js";
import { dlqPurgeCommand } from "./dlqPurgeCommand.js";
import { dlqRedriveCommand } from "./dlqRedriveCommand.js";
import { dlqCancelCommand } from "./dlqCancelCommand.js";
import { dlqTasksCommand } from "./dlqTasksCommand.js";
import { eventsCommand } from "./eventsCommand.js";
import { inspectCommand } from "./inspectCommand.js";
import type { OperatorCommand } from "./OperatorCommand.js";
import { trimCommand } from "./trimCommand.js";

export const OPERATOR_COMMANDS: readonly OperatorCommand[] = [
  inspectCommand,
  dlqListCommand,
  dlqRedriveCommand,
  dlqPurgeCommand,
  dlqTasksCommand,
  dlqCancelCommand,
  consumersReapCommand,
  trimCommand,
  eventsCommand,
];

/**
 * An operator verb as the CLI dispatches it: execute() loads the configuration, connects, and
 * runs the verb. The operator commands never take the lease: each of their writes is one
 * atomic, repeatable script, safe next to a running daemon.
 */
function asCommand(command: OperatorCommand): Command {
  return {
    ...command,
    async execute(values, io, interruption) {
      if (interruption === undefined) throw new Error("an operator command runs interruptible");
      // Loaded only now: configuration loading, the logger and the Redis client are the bulk of
      // the start-up, and --help or a usage error needs none of them.
      const { connectAndRun } = await import("./connectAndRun.js");
      return connectAndRun(command, values, io, interruption);
    },
  };
}

export const OPERATOR_CLI_COMMANDS: readonly Command[] = OPERATOR_COMMANDS.map(asCommand);

/**
 * Runs an operator command (inspect, dlq ..., consumers reap, trim, events) when argv names
 * one, and resolves to its exit code; resolves to undefined for anything else. The same
 * dispatch as the CLI's (runCommand), over the operator commands alone.
 */
export async function runOperatorCommand(
  argv: readonly string[],
  io: CommandIo = process,
): Promise<number | undefined> {
  return runCommand(OPERATOR_CLI_COMMANDS, argv, io);
}
