import type { GroupConfig } from "./configTypes.js";
import { keySlot, sameSlotKey } from "./keySlot.js";
import { resolveGroup } from "./resolveGroup.js";

/** A key that one page script of a group would touch outside the source stream's hash slot. */
export interface SlotViolation {
  setting: "requeueStream" | "deadLetterStream";
  key: string;
  slot: number;
  /** A name in the source's slot that would work. */
  suggestion: string;
}

const SUFFIX: Record<SlotViolation["setting"], string> = {
  requeueStream: "retry",
  deadLetterStream: "dead",
};

/**
 * Redis Cluster runs a script only when all its keys hash to one slot (CROSSSLOT otherwise), and
 * a sweep page moves entries from the stream to its requeue target and dead-letter stream in one
 * script; so on Cluster both must share the stream's slot. Slots are computed as Redis does
 * (keySlot), hash tags and stray braces included.
 */
export function slotViolations(group: GroupConfig): SlotViolation[] {
  const resolved = resolveGroup(group);
  const sourceSlot = keySlot(group.stream);
  const violations: SlotViolation[] = [];
  for (const setting of ["requeueStream", "deadLetterStream"] as const) {
    const key = resolved[setting];
    const slot = keySlot(key);
    if (slot !== sourceSlot) {
      violations.push({
        setting,
        key,
        slot,
        suggestion: sameSlotKey(group.stream, SUFFIX[setting]),
      });
    }
  }
  return violations;
}

/**
 * Why a group (a discovered one, which no start-up check saw) cannot be swept on Redis Cluster,
 * or undefined when its keys share the stream's slot.
 */
export function slotRefusal(group: GroupConfig): string | undefined {
  const [violation] = slotViolations(group);
  if (violation === undefined) return undefined;
  const configured = group[violation.setting] !== "";
  return (
    `refusing ${group.stream}/${group.group}: its ${violation.setting} must be ` +
    describeViolation(group.stream, violation, configured)
  );
}

/** What was expected, in words: shared by the start-up refusal and a discovered group's. */
export function describeViolation(
  stream: string,
  violation: SlotViolation,
  configured: boolean,
): string {
  return (
    `on Redis Cluster a stream in the hash slot of stream ${JSON.stringify(stream)} ` +
    `(slot ${keySlot(stream)}); ${JSON.stringify(violation.key)} hashes to slot ` +
    `${violation.slot}${configured ? "" : " (the default)"}. A name that works: ` +
    JSON.stringify(violation.suggestion)
  );
}
