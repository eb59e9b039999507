import { createProgress } from "./createProgress.js";
import { purgeDeadLetters } from "../../operator/purgeDeadLetters.js";
import { EXIT } from "../exitCodes.js";
import { describeHeldBack } from "../../operator/HeldBackTally.js";
import { idsOption, reasonOption, reportUnknownIds } from "./dlqOptions.js";
import { existingGroup } from "./existingGroup.js";
import {
  durationOption,
  requiredString,
  writeJson,
  type OperatorSession,
  type OptionValues,
} from "./OperatorCommand.js";

/** `dlq purge`: what dlqPurgeCommand runs, loaded only when the command is run. */
export async function runDlqPurge(values: OptionValues, session: OperatorSession): Promise<number> {
  const group = await existingGroup(
    session,
    requiredString(values, "stream"),
    requiredString(values, "group"),
  );
  const summary = await purgeDeadLetters(session.redis, group, {
    olderThanMs: durationOption(values, "older-than", "older-than-ms"),
    reason: reasonOption(values),
    ...(values.id === undefined ? {} : { ids: idsOption(values) }),
    dryRun: values["dry-run"] === true,
    progress: createProgress("purge", session.stderr),
    signal: session.signal,
  });
  if (values.json === true) writeJson(session, summary);
  else {
    const verb = summary.dryRun ? "would purge" : "purged";
    session.stdout.write(
      `${group.id}: ${verb} ${summary.purged} dead letter(s) from ${group.deadLetterStream}; ${summary.remaining} remaining${describeHeldBack(summary.heldBackBy)}\n`,
    );
  }
  if (reportUnknownIds(session.stderr, "dlq purge", group.id, summary.unknownIds)) {
    return EXIT.failure;
  }
  return EXIT.ok;
}
