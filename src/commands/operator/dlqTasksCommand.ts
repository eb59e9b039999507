import { COMMON_HELP, COMMON_OPTIONS, runFrom, type OperatorCommand } from "./OperatorCommand.js";
import { UsageError } from "../Command.js";

export const dlqTasksCommand: OperatorCommand = {
  words: ["dlq", "tasks"],
  synopsis: "dlq tasks [--stream S] [--json]",
  help: `Usage: stream-janitor dlq tasks [--stream S] [--json]

The redrive tasks (dlq redrive --async), newest first: id, status (RUNNING, CANCELLING,
COMPLETED, CANCELLED, FAILED), moved and to move, rate, who started it and when, the failure.
Finished tasks are listed until their --keep ends (default 7d). Read-only.

Options:
      --stream S      only the tasks of this source stream
${COMMON_HELP}

Prints {"tasks":[{"id","status","stream","group","deadLetterStream","target","reason","moved",
"toMove","rate","startedBy","startedAt","finishedAt","failure",...}]} with --json.

Examples:
  stream-janitor dlq tasks
  stream-janitor dlq tasks --json | jq '.tasks[] | select(.status == "RUNNING")'`,
  options: { ...COMMON_OPTIONS, stream: { type: "string" } },
  validate(values) {
    if (values.stream === "") throw new UsageError("--stream expects a stream name");
  },
  run: runFrom(async () => (await import("./runDlqTasks.js")).runDlqTasks),
};
