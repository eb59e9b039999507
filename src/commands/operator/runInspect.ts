import { addGroupStatuses } from "../../operations/addGroupStatuses.js";
import { fetchStatusReport } from "../../operations/fetchStatusReport.js";
import { formatInspectReport } from "../../operations/formatInspectReport.js";
import { readInspectReport } from "../../operations/inspectReport.js";
import { resolveGroup } from "../../core/resolveGroup.js";
import { EXIT } from "../exitCodes.js";
import { writeJson, type OperatorSession } from "./OperatorCommand.js";
import { type OptionValues } from "../Command.js";

/** The janitor answers from memory: a short wait, so that inspect stays quick without one. */
const STATUS_TIMEOUT_MS = 1000;

/** `inspect`: what inspectCommand runs, loaded only when the command is run. */
export async function runInspect(values: OptionValues, session: OperatorSession): Promise<number> {
  const groups = session.config.groups.map(resolveGroup);
  const url = typeof values.url === "string" ? values.url : undefined;
  // Both at once: asking the janitor costs no time while Redis is read.
  const [read, answer] = await Promise.all([
    readInspectReport(session.redis, groups, session.config),
    fetchStatusReport(session.config.http, { url, timeoutMs: STATUS_TIMEOUT_MS }),
  ]);
  const report = addGroupStatuses(read, answer);
  if (values.json === true) writeJson(session, report);
  else session.stdout.write(`${formatInspectReport(report)}\n`);
  return EXIT.ok;
}
