import { userInfo } from "node:os";
import { UsageError, type OptionValues } from "../Command.js";
import { durationOption } from "./OperatorCommand.js";

/** How long a finished redrive task is kept (listed by dlq tasks) unless --keep says otherwise. */
export const DEFAULT_KEEP = "7d";
const DEFAULT_KEEP_MS = 7 * 24 * 3_600_000;

/** --async takes the range options only; --by and --keep belong to it. */
export function checkAsync(values: OptionValues): void {
  if (values.async !== true) {
    for (const name of ["by", "keep"]) {
      if (values[name] !== undefined) throw new UsageError(`--${name} needs --async`);
    }
    return;
  }
  for (const name of ["dry-run", "id", "from-file"]) {
    if (values[name] !== undefined) throw new UsageError(`--async cannot be used with --${name}`);
  }
  keepOption(values);
  if (values.by === "") throw new UsageError("--by expects a name");
}

/** --keep as milliseconds (at least a minute), the default when absent. */
export function keepOption(values: OptionValues): number {
  return durationOption(values, "keep", "keep-ms", 60_000) ?? DEFAULT_KEEP_MS;
}

/** --by, else the OS user. */
export function startedByOption(values: OptionValues): string {
  if (typeof values.by === "string") return values.by;
  try {
    return userInfo().username;
  } catch {
    return `uid:${process.getuid?.() ?? "?"}`;
  }
}
