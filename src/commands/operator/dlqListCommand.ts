import { listDeadLetters } from "../../operator/listDeadLetters.js";
import { EXIT } from "../exitCodes.js";
import { existingGroup } from "./existingGroup.js";
import {
  COMMON_HELP,
  COMMON_OPTIONS,
  integerOption,
  requiredString,
  writeJson,
  type OperatorCommand,
} from "./OperatorCommand.js";

const DEFAULT_LIMIT = 20;

export const dlqListCommand: OperatorCommand = {
  words: ["dlq", "list"],
  synopsis: "dlq list --stream S --group G [--limit N] [--json]",
  help: `Usage: stream-janitor dlq list --stream S --group G [--limit N] [--json]

The group's newest dead letters, newest last, with their metadata (original id, reason,
deliveries, when, last consumer) and their original fields. Read-only. Values that are not
valid UTF-8 are shown as base64:<bytes>.

Options:
      --stream S      source stream (required)
      --group G       consumer group (required)
      --limit N       at most N dead letters (default ${DEFAULT_LIMIT})
${COMMON_HELP}

Examples:
  stream-janitor dlq list --stream orders --group billing
  stream-janitor dlq list --stream orders --group billing --limit 100 --json | jq '.deadLetters[].metadata'`,
  options: {
    ...COMMON_OPTIONS,
    stream: { type: "string" },
    group: { type: "string" },
    limit: { type: "string" },
  },
  validate(values) {
    requiredString(values, "stream");
    requiredString(values, "group");
    integerOption(values, "limit", 1);
  },
  async run(values, session) {
    const group = await existingGroup(
      session,
      requiredString(values, "stream"),
      requiredString(values, "group"),
    );
    const limit = integerOption(values, "limit", 1) ?? DEFAULT_LIMIT;
    const deadLetters = await listDeadLetters(session.redis, group, limit);
    if (values.json === true) {
      writeJson(session, { deadLetterStream: group.deadLetterStream, deadLetters });
      return EXIT.ok;
    }
    if (deadLetters.length === 0) {
      session.stdout.write(`no dead letters of ${group.id} in ${group.deadLetterStream}\n`);
      return EXIT.ok;
    }
    for (const letter of deadLetters) {
      const m = letter.metadata;
      const when = m["x-dead-lettered-at"];
      session.stdout.write(
        `${letter.id}  original ${m["x-original-id"] ?? "?"}  ${m["x-dead-letter-reason"] ?? "?"}` +
          `  deliveries ${m["x-delivery-count"] ?? "?"}  consumer ${m["x-last-consumer"] ?? "?"}` +
          `  at ${when === undefined ? "?" : new Date(Number(when)).toISOString()}` +
          (m["x-redrive-count"] === undefined ? "" : `  redriven ${m["x-redrive-count"]}x`) +
          "\n",
      );
      const fields = letter.fields.map(([name, value]) => `${name}=${value}`).join(" ");
      session.stdout.write(`    ${fields}\n`);
    }
    return EXIT.ok;
  },
};
