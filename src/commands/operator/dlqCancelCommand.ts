import { UsageError } from "../Command.js";
import { COMMON_HELP, COMMON_OPTIONS, runFrom, type OperatorCommand } from "./OperatorCommand.js";

export const dlqCancelCommand: OperatorCommand = {
  words: ["dlq", "cancel"],
  synopsis: "dlq cancel TASK [--json]",
  help: `Usage: stream-janitor dlq cancel TASK [--json]

Cancels a redrive task (dlq redrive --async): a RUNNING task becomes CANCELLING, and the leader
makes it CANCELLED at its next batch; what was moved stays moved. A task that has ended is left
as it is (exit 0, its status said). An unknown id is an error (exit 1).

Options:
${COMMON_HELP}

Prints {"id","before","after"} with --json: the status before and after.

Examples:
  stream-janitor dlq cancel rt-mi3k2v1c-0f3a9b`,
  options: { ...COMMON_OPTIONS },
  positional: "task",
  validate(values) {
    if (typeof values.task !== "string" || values.task === "") {
      throw new UsageError("dlq cancel takes a task id (as dlq tasks lists it)");
    }
  },
  run: runFrom(async () => (await import("./runDlqCancel.js")).runDlqCancel),
};
