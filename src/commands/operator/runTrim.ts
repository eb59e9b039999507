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
  type OptionValues,
} from "./OperatorCommand.js";

/** `trim`: what trimCommand runs, loaded only when the command is run. */
export async function runTrim(values: OptionValues, session: OperatorSession): Promise<number> {
  const stream = requiredString(values, "stream");
  await existingStream(session, stream);
  const summary = await safeTrim(session.redis, {
    stream,
    maxLen: integerOption(values, "max-len"),
    maxAgeMs: durationOption(values, "max-age", "max-age-ms", 1),
    dryRun: values["dry-run"] === true,
    signal: session.signal,
    progress: createProgress("trim", session.stderr),
  });
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
