import { ConfigError } from "./ConfigError.js";
import type { GroupConfig } from "../core/configTypes.js";
import { describeViolation, slotViolations } from "../core/slotRule.js";

/**
 * The start-up refusal on Cluster (exit 78), one problem per group: names the key, its slot, the
 * stream's slot and a name that would work. A default dead-letter stream is named in the source's
 * slot already, unless the stream's name cannot be wrapped in braces (`a}b`): then it says what
 * to set.
 */
export function clusterSlotProblems(groups: readonly GroupConfig[]): ConfigError[] {
  return groups.flatMap((group, index) => {
    const [violation] = slotViolations(group);
    if (violation === undefined) return [];
    const configured = group[violation.setting] !== "";
    return [
      new ConfigError(
        `groups[${index}].${violation.setting}`,
        configured ? violation.key : undefined,
        describeViolation(group.stream, violation, configured),
      ),
    ];
  });
}
