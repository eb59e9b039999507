import { DURATION_FORM, parseDuration } from "../../config/parseDuration.js";
import { UsageError, type OptionValues } from "../Command.js";

/** --since in ms (a duration: 30m, 2h, 7d), or undefined when absent. */
export function sinceOption(values: OptionValues): number | undefined {
  if (values.since === undefined) return undefined;
  const ms = parseDuration(values.since);
  if (ms === undefined) {
    throw new UsageError(`--since expects ${DURATION_FORM}, got ${String(values.since)}`);
  }
  return ms;
}
