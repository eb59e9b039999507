import { DEFAULT_LIMIT, reasonOption, REASON_HELP } from "./dlqOptions.js";
import {
  COMMON_HELP,
  COMMON_OPTIONS,
  integerOption,
  requiredString,
  runFrom,
  type OperatorCommand,
} from "./OperatorCommand.js";

export const dlqListCommand: OperatorCommand = {
  words: ["dlq", "list"],
  synopsis: "dlq list --stream S --group G [--limit N] [--reason R] [--json]",
  help: `Usage: stream-janitor dlq list --stream S --group G [--limit N] [--reason R] [--json]

The group's newest dead letters, newest last, with their metadata (original id, reason,
deliveries, when, last consumer) and their original fields. Read-only. Values that are not
valid UTF-8 are shown as base64:<bytes>.

Options:
      --stream S      source stream (required)
      --group G       consumer group (required)
      --limit N       at most N dead letters (default ${DEFAULT_LIMIT})
${REASON_HELP}
${COMMON_HELP}

Examples:
  stream-janitor dlq list --stream orders --group billing
  stream-janitor dlq list --stream orders --group billing --limit 100 --json | jq '.deadLetters[].metadata'`,
  options: {
    ...COMMON_OPTIONS,
    stream: { type: "string" },
    group: { type: "string" },
    limit: { type: "string" },
    reason: { type: "string" },
  },
  validate(values) {
    requiredString(values, "stream");
    requiredString(values, "group");
    integerOption(values, "limit", 1);
    reasonOption(values);
  },
  run: runFrom(async () => (await import("./runDlqList.js")).runDlqList),
};
