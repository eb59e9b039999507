import { cancelRedriveTask } from "../../operations/redriveTasks.js";
import type { OptionValues } from "../Command.js";
import { EXIT } from "../exitCodes.js";
import {
  OperatorFailure,
  requiredString,
  writeJson,
  type OperatorSession,
} from "./OperatorCommand.js";

/** `dlq cancel TASK`: RUNNING becomes CANCELLING; the leader's next batch ends it. */
export async function runDlqCancel(
  values: OptionValues,
  session: OperatorSession,
): Promise<number> {
  const id = requiredString(values, "task");
  const result = await cancelRedriveTask(session.redis, session.config.lease.key, id);
  if (result === undefined) {
    throw new OperatorFailure(`no redrive task ${id} (dlq tasks lists them; finished ones expire)`);
  }
  const { before, after } = result;
  if (values.json === true) writeJson(session, { id, before, after });
  else if (before === "RUNNING") {
    session.stdout.write(`${id}: CANCELLING; the leader stops it at its next batch\n`);
  } else session.stdout.write(`${id}: ${after}, left as it is\n`);
  return EXIT.ok;
}
