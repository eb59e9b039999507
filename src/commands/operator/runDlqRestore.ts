import { createProgress } from "./createProgress.js";
import { RateLimiter } from "../../operations/RateLimiter.js";
import { RedriveRefusedError } from "../../operations/redriveDeadLetters.js";
import {
  DeadLetterFileError,
  fileGroup,
  readDeadLetterFile,
} from "../../operations/readDeadLetterFile.js";
import { restoreDeadLetters } from "../../operations/restoreDeadLetters.js";
import { EXIT } from "../exitCodes.js";
import { DEFAULT_RATE, toOption } from "./dlqOptions.js";
import { existingGroup } from "./existingGroup.js";
import {
  integerOption,
  OperatorFailure,
  writeJson,
  type OperatorSession,
} from "./OperatorCommand.js";
import { type OptionValues } from "../Command.js";
import { writeOperatorEvent } from "./writeOperatorEvent.js";

function optionalString(values: OptionValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * `dlq redrive --from-file FILE`: the dead letters a `dlq purge --save` wrote, back to the group's
 * requeue target. The whole file is read and checked before anything is written.
 */
export async function runDlqRestore(
  values: OptionValues,
  session: OperatorSession,
): Promise<number> {
  const path = String(values["from-file"]);
  const to = toOption(values);
  try {
    const letters = await readDeadLetterFile(path);
    const chosen = fileGroup(path, letters, {
      stream: optionalString(values, "stream"),
      group: optionalString(values, "group"),
    });
    const group = await existingGroup(session, chosen.stream, chosen.group);
    const summary = await restoreDeadLetters(session.redis, group, letters, {
      dryRun: values["dry-run"] === true,
      to,
      limiter: new RateLimiter({ ratePerSecond: integerOption(values, "rate") ?? DEFAULT_RATE }),
      progress: createProgress("redrive", session.stderr),
      signal: session.signal,
    });
    if (!summary.dryRun && summary.redriven > 0) {
      await writeOperatorEvent(session, {
        type: "dlq-redriven",
        stream: group.stream,
        group: group.group,
        count: summary.redriven,
        detail: { fromFile: path, target: summary.target },
      });
    }
    if (values.json === true) writeJson(session, { ...summary, file: path });
    else {
      const verb = summary.dryRun ? "would redrive" : "redrove";
      session.stdout.write(
        `${group.id}: ${verb} ${summary.redriven} of ${summary.total} from ${path} to ${summary.target} (${summary.alreadyRestored} already restored)\n`,
      );
    }
    if (summary.oversizedIds !== undefined) {
      session.stderr.write(
        `stream-janitor: left ${summary.oversizedIds.length} dead letter(s) with too many fields to copy in one script: ${summary.oversizedIds.slice(0, 10).join(", ")}\n`,
      );
    }
    return EXIT.ok;
  } catch (error) {
    if (error instanceof RedriveRefusedError || error instanceof DeadLetterFileError) {
      throw new OperatorFailure(error.message);
    }
    throw error;
  }
}
