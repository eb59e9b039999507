import { createProgress } from "./createProgress.js";
import { purgeDeadLetters } from "../../operations/purgeDeadLetters.js";
import { saveDeadLetters } from "../../operations/saveDeadLetters.js";
import { EXIT } from "../exitCodes.js";
import { describeHeldBack } from "../../operations/HeldBackTally.js";
import { idsOption, reasonOption, reportUnknownIds } from "./dlqOptions.js";
import { confirmPurgeAll } from "./confirmPurge.js";
import { existingGroup } from "./existingGroup.js";
import {
  durationOption,
  requiredString,
  writeJson,
  type OperatorSession,
} from "./OperatorCommand.js";
import { type OptionValues } from "../Command.js";
import { doneIds } from "./doneIds.js";
import { writeOperatorEvent } from "./writeOperatorEvent.js";

/** `dlq purge`: what dlqPurgeCommand runs, loaded only when the command is run. */
export async function runDlqPurge(values: OptionValues, session: OperatorSession): Promise<number> {
  const group = await existingGroup(
    session,
    requiredString(values, "stream"),
    requiredString(values, "group"),
  );
  const olderThanMs = durationOption(values, "older-than", "older-than-ms");
  const reason = reasonOption(values);
  const ids = values.id === undefined ? undefined : idsOption(values);
  const dryRun = values["dry-run"] === true;
  if (values.all === true && values.yes !== true && !dryRun) await confirmPurgeAll(session, group);
  if (typeof values.save === "string" && !dryRun) {
    // Written whole before the first deletion: a purge that fails to save deletes nothing.
    const selection = { reason, ids, olderThanMs };
    const saved = await saveDeadLetters(session.redis, group, selection, values.save);
    session.stderr.write(`${group.id}: saved ${saved} dead letter(s) to ${values.save}\n`);
  }
  const summary = await purgeDeadLetters(session.redis, group, {
    olderThanMs,
    reason,
    ...(ids === undefined ? {} : { ids }),
    dryRun,
    progress: createProgress("purge", session.stderr),
    signal: session.signal,
  });
  if (!summary.dryRun && summary.purged > 0) {
    const all = values.all === true ? true : undefined;
    await writeOperatorEvent(session, {
      type: "dlq-purged",
      stream: group.stream,
      group: group.group,
      count: summary.purged,
      ids: doneIds(ids, summary.purged, summary.unknownIds ?? []),
      // The selectors used (JSON leaves out the ones not given).
      detail: { deadLetterStream: group.deadLetterStream, all, ids, olderThanMs, reason },
    });
  }
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
