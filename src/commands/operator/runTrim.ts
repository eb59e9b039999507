import { createProgress } from "./createProgress.js";
import { safeTrim } from "../../maintenance/safeTrim.js";
import { EXIT } from "../exitCodes.js";
import { existingStream } from "./existingGroup.js";
import {
  durationOption,
  integerOption,
  requiredString,
  writeJson,
  type OperatorSession,
} from "./OperatorCommand.js";
import { type OptionValues } from "../Command.js";
import { writeOperatorEvent } from "./writeOperatorEvent.js";

/** `trim`: what trimCommand runs, loaded only when the command is run. */
export async function runTrim(values: OptionValues, session: OperatorSession): Promise<number> {
  const stream = requiredString(values, "stream");
  await existingStream(session, stream);
  const maxLen = integerOption(values, "max-len");
  const maxAgeMs = durationOption(values, "max-age", "max-age-ms", 1);
  const summary = await safeTrim(session.redis, {
    stream,
    maxLen,
    maxAgeMs,
    dryRun: values["dry-run"] === true,
    signal: session.signal,
    progress: createProgress("trim", session.stderr),
  });
  if (!summary.dryRun && summary.removed > 0) {
    const { removed, length, blockedBy } = summary;
    await writeOperatorEvent(session, {
      type: "trimmed",
      stream,
      count: removed,
      // The policy given (JSON leaves out the one not given), and who held the rest back.
      detail: { maxLen, maxAgeMs, length, heldBackBy: blockedBy },
    });
  }
  if (values.json === true) writeJson(session, summary);
  else {
    const verb = summary.dryRun ? "would remove" : "removed";
    const held =
      summary.blockedBy.length === 0
        ? ""
        : `; held back by ${summary.blockedBy.map((b) => `group ${b.group} (needs ${b.neededFromId})`).join(", ")}`;
    session.stdout.write(
      `${summary.stream}: ${verb} ${summary.removed} entries, ${summary.length} left${held}\n`,
    );
  }
  return EXIT.ok;
}
