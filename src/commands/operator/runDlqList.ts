import { DEFAULT_LIMIT, reasonOption } from "./dlqOptions.js";
import { listDeadLetters } from "../../reads/listDeadLetters.js";
import { EXIT } from "../exitCodes.js";
import { existingGroup } from "./existingGroup.js";
import {
  integerOption,
  requiredString,
  writeJson,
  type OperatorSession,
} from "./OperatorCommand.js";
import { type OptionValues } from "../Command.js";

/** `dlq list`: what dlqListCommand runs, loaded only when the command is run. */
export async function runDlqList(values: OptionValues, session: OperatorSession): Promise<number> {
  const group = await existingGroup(
    session,
    requiredString(values, "stream"),
    requiredString(values, "group"),
  );
  const limit = integerOption(values, "limit", 1) ?? DEFAULT_LIMIT;
  const deadLetters = await listDeadLetters(session.redis, group, limit, reasonOption(values));
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
}
