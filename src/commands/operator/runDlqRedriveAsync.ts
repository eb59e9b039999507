import type { OptionValues } from "../Command.js";
import { EXIT } from "../exitCodes.js";
import { RedriveRefusedError } from "../../operations/redriveDeadLetters.js";
import { startRedriveTask, TaskActiveError } from "../../operations/redriveTasks.js";
import { keepOption, startedByOption } from "./dlqTaskOptions.js";
import { OperatorFailure, writeJson, type OperatorSession } from "./OperatorCommand.js";
import { redriveSelection } from "./redriveSelection.js";
import { writeOperatorEvent } from "./writeOperatorEvent.js";

/** `dlq redrive --async`: records the task, prints its id; the leader runs it. */
export async function runDlqRedriveAsync(
  values: OptionValues,
  session: OperatorSession,
): Promise<number> {
  const selection = await redriveSelection(values, session);
  const { group, limit, reason, olderThanMs, to, rate: perSecond } = selection;
  try {
    const task = await startRedriveTask(session.redis, group, {
      leaseKey: session.config.lease.key,
      reason,
      olderThanMs,
      limit: limit ?? Number.POSITIVE_INFINITY,
      to,
      rate: perSecond,
      startedBy: startedByOption(values),
      keepMs: keepOption(values),
    });
    const { id, deadLetterStream, target, toMove, rate, startedBy } = task;
    await writeOperatorEvent(session, {
      type: "task-started",
      stream: group.stream,
      group: group.group,
      count: toMove,
      detail: { id, deadLetterStream, target, toMove, rate, startedBy, reason: task.reason },
    });
    if (values.json === true) writeJson(session, task);
    else {
      // The id alone on stdout (for scripts: id=$(...)); what it does on stderr.
      session.stdout.write(`${id}\n`);
      session.stderr.write(
        `${group.id}: redrive task ${id} started by ${startedBy}: ${toMove} dead letter(s) from ${deadLetterStream} to ${target}${rate > 0 ? ` at ${rate}/s` : ""}; the leader runs it (dlq tasks, dlq cancel ${id})\n`,
      );
    }
    return EXIT.ok;
  } catch (error) {
    if (error instanceof RedriveRefusedError || error instanceof TaskActiveError) {
      throw new OperatorFailure(error.message);
    }
    throw error;
  }
}
