import { checkPurgeSelector, reasonOption, REASON_HELP } from "./dlqOptions.js";
import {
  COMMON_HELP,
  COMMON_OPTIONS,
  durationOption,
  requiredString,
  runFrom,
  type OperatorCommand,
} from "./OperatorCommand.js";

export const dlqPurgeCommand: OperatorCommand = {
  words: ["dlq", "purge"],
  synopsis:
    "dlq purge --stream S --group G (--all | --id ID... | --older-than D | --reason R) [--yes] [--save FILE] [--dry-run] [--json]",
  help: `Usage: stream-janitor dlq purge --stream S --group G (--all | --id ID... | --older-than D | --reason R)
         [--yes] [--save FILE] [--dry-run] [--json]

Deletes the group's dead letters for good: say which (with no selector it refuses, exit 2).
Dead letters of other groups sharing the dead-letter stream are left alone, and so are those a
consumer group reading the dead-letter stream still needs (pending there, or not yet delivered
to it): the groups that held dead letters back are named. Only dead letters present when it
starts are considered. Safe to interrupt and run again. Does not need the lease.

Options:
      --stream S          source stream (required)
      --group G           consumer group (required)
      --all               every dead letter of the group
      --id ID             only this dead letter (its id in the dead-letter stream, as dlq
                          list shows it); repeat for several; an id that is not one of the
                          group's dead letters is reported (exit 1)
      --older-than D      only dead letters dead-lettered at least D ago (Redis clock):
                          500ms, 30s, 5m, 2h, 7d or milliseconds
      --older-than-ms MS  the older spelling of --older-than
${REASON_HELP.replace("--reason R     ", "--reason R         ")}
      --yes               --all on a terminal asks for the group's name typed back; --yes
                          does not ask (without a terminal nothing is asked)
      --save FILE         first write the selected dead letters to FILE (JSON lines: id,
                          fields as [name, value] pairs, each {"utf8": s} or {"base64": s})
      --dry-run           count what would be deleted, change nothing
${COMMON_HELP}

Prints {"purged":N,"remaining":N,"dryRun":false} with --json, plus "heldBackBy":[{"group":G,
"entries":N}] when groups of the dead-letter stream held dead letters back, and "unknownIds"
with --id.

Examples:
  stream-janitor dlq purge --stream orders --group billing --older-than 7d --dry-run
  stream-janitor dlq purge --stream orders --group billing --reason action --json
  stream-janitor dlq purge --stream orders --group billing --id 1796057966000-0
  stream-janitor dlq purge --stream orders --group billing --all --save billing-dead.jsonl`,
  stopsOnSignal: true,
  options: {
    ...COMMON_OPTIONS,
    stream: { type: "string" },
    group: { type: "string" },
    all: { type: "boolean" },
    id: { type: "string", multiple: true },
    "older-than": { type: "string" },
    "older-than-ms": { type: "string" },
    reason: { type: "string" },
    "dry-run": { type: "boolean" },
    yes: { type: "boolean" },
    save: { type: "string" },
  },
  validate(values) {
    requiredString(values, "stream");
    requiredString(values, "group");
    durationOption(values, "older-than", "older-than-ms");
    reasonOption(values);
    checkPurgeSelector(values);
  },
  run: runFrom(async () => (await import("./runDlqPurge.js")).runDlqPurge),
};
