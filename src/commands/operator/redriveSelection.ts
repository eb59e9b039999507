import type { OptionValues } from "../Command.js";
import type { ResolvedGroup } from "../../core/resolveGroup.js";
import type { RedriveTo } from "../../operations/redriveTarget.js";
import { DEFAULT_RATE, reasonOption, toOption } from "./dlqOptions.js";
import { existingGroup } from "./existingGroup.js";
import {
  durationOption,
  integerOption,
  requiredString,
  type OperatorSession,
} from "./OperatorCommand.js";

/** What `dlq redrive` moves, with or without --async: the options both read the same way. */
export interface RedriveSelection {
  group: ResolvedGroup;
  /** --limit; undefined: every dead letter. */
  limit: number | undefined;
  reason: ReturnType<typeof reasonOption>;
  /** --older-than (or --older-than-ms): only dead letters older than this, by the Redis clock. */
  olderThanMs: number | undefined;
  to: RedriveTo;
  /** --rate, dead letters per second (0: no limit). */
  rate: number;
}

/** Reads --stream/--group (the group must exist), --limit, --reason, --older-than, --to and --rate. */
export async function redriveSelection(
  values: OptionValues,
  session: OperatorSession,
): Promise<RedriveSelection> {
  const group = await existingGroup(
    session,
    requiredString(values, "stream"),
    requiredString(values, "group"),
  );
  return {
    group,
    limit: integerOption(values, "limit", 1),
    reason: reasonOption(values),
    olderThanMs: durationOption(values, "older-than", "older-than-ms"),
    to: toOption(values),
    rate: integerOption(values, "rate") ?? DEFAULT_RATE,
  };
}
