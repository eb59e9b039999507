import { formatInspectReport } from "../../operator/formatInspectReport.js";
import { readInspectReport } from "../../operator/inspectReport.js";
import { resolveGroup } from "../../core/resolveGroup.js";
import { EXIT } from "../exitCodes.js";
import { writeJson, type OperatorSession, type OptionValues } from "./OperatorCommand.js";

/** `inspect`: what inspectCommand runs, loaded only when the command is run. */
export async function runInspect(values: OptionValues, session: OperatorSession): Promise<number> {
  const groups = session.config.groups.map(resolveGroup);
  const report = await readInspectReport(session.redis, groups, session.config);
  if (values.json === true) writeJson(session, report);
  else session.stdout.write(`${formatInspectReport(report)}\n`);
  return EXIT.ok;
}
