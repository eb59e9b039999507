import { createProgress } from "../../operator/progress.js";
import { purgeDeadLetters } from "../../operator/purgeDeadLetters.js";
import { EXIT } from "../exitCodes.js";
import { existingGroup } from "./existingGroup.js";
import { reasonOption, REASON_HELP } from "./dlqOptions.js";
import {
  COMMON_HELP,
  COMMON_OPTIONS,
  durationOption,
  requiredString,
  writeJson,
  type OperatorCommand,
} from "./OperatorCommand.js";

export const dlqPurgeCommand: OperatorCommand = {
  words: ["dlq", "purge"],
  synopsis: "dlq purge --stream S --group G [--older-than D] [--reason R] [--dry-run] [--json]",
  help: `Usage: stream-janitor dlq purge --stream S --group G [--older-than D] [--reason R] [--dry-run] [--json]

Deletes the group's dead letters for good. Dead letters of other groups sharing the dead-letter
stream are left alone; only those present when it starts are considered. Safe to interrupt and
run again. Does not need the lease.

Options:
      --stream S          source stream (required)
      --group G           consumer group (required)
      --older-than D      only dead letters dead-lettered at least D ago (Redis clock):
                          500ms, 30s, 5m, 2h, 7d or milliseconds
      --older-than-ms MS  the older spelling of --older-than
${REASON_HELP.replace("--reason R     ", "--reason R         ")}
      --dry-run           count what would be deleted, change nothing
${COMMON_HELP}

Prints {"purged":N,"remaining":N,"dryRun":false} with --json.

Examples:
  stream-janitor dlq purge --stream orders --group billing --older-than 7d --dry-run
  stream-janitor dlq purge --stream orders --group billing --reason action --json`,
  stopsOnSignal: true,
  options: {
    ...COMMON_OPTIONS,
    stream: { type: "string" },
    group: { type: "string" },
    "older-than": { type: "string" },
    "older-than-ms": { type: "string" },
    reason: { type: "string" },
    "dry-run": { type: "boolean" },
  },
  validate(values) {
    requiredString(values, "stream");
    requiredString(values, "group");
    durationOption(values, "older-than", "older-than-ms");
    reasonOption(values);
  },
  async run(values, session) {
    const group = await existingGroup(
      session,
      requiredString(values, "stream"),
      requiredString(values, "group"),
    );
    const summary = await purgeDeadLetters(session.redis, group, {
      olderThanMs: durationOption(values, "older-than", "older-than-ms"),
      reason: reasonOption(values),
      dryRun: values["dry-run"] === true,
      progress: createProgress("purge", session.stderr),
      signal: session.signal,
    });
    if (values.json === true) writeJson(session, summary);
    else {
      const verb = summary.dryRun ? "would purge" : "purged";
      session.stdout.write(
        `${group.id}: ${verb} ${summary.purged} dead letter(s) from ${group.deadLetterStream}; ${summary.remaining} remaining\n`,
      );
    }
    return EXIT.ok;
  },
};
