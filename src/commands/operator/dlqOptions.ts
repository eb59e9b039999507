import { DEAD_LETTER_REASONS, type DeadLetterReason } from "../../operator/deadLetterScan.js";
import { UsageError, type OptionValues } from "./OperatorCommand.js";

export const REASON_HELP = `      --reason R      only dead letters of this reason: max-deliveries or action`;

export function reasonOption(values: OptionValues): DeadLetterReason | undefined {
  const reason = values.reason;
  if (reason === undefined) return undefined;
  if (typeof reason !== "string" || !(DEAD_LETTER_REASONS as readonly string[]).includes(reason)) {
    throw new UsageError(
      `--reason expects one of ${DEAD_LETTER_REASONS.join(", ")}, got ${String(reason)}`,
    );
  }
  return reason as DeadLetterReason;
}
