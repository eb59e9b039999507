import { sameSlotKey } from "./keySlot.js";
import type { ResolvedGroup } from "./resolveGroup.js";

/**
 * The keys of a group's dead-letter index, all in its dead-letter stream's hash slot (so one
 * script reaches them with the dead letters; the slot rule keeps that slot the source's):
 * - `index`: a stream with one entry per dead letter of this group, at the dead letter's own id,
 *   holding its x-* envelope and no body. Its XLEN is the group's exact dead-letter count, and
 *   a dead letter's envelope is read without its body.
 * - `state`: a hash; `complete` is 1 once the index holds every dead letter of the group (built
 *   once from what older versions wrote, `cursor` says how far while it is being built).
 * - `floor`: per dead-letter stream, the first id left after deadLetterMaxLen last dropped dead
 *   letters; each group sharing the stream trims its index below it.
 * The source stream's name is in the index's name with its length, so that no two stream/group
 * pairs sharing a dead-letter stream can get the same key (names may contain `:`).
 */
export interface DeadLetterIndexKeys {
  index: string;
  state: string;
  floor: string;
}

type IndexOwner = Pick<ResolvedGroup, "stream" | "group" | "deadLetterStream">;

/**
 * Keys by group object: every scrape, status sample and sweep pass asks for every group's, and
 * made anew they were three strings per group per call. A group object whose names changed
 * since (not one the daemon makes) gets its keys again.
 */
const known = new WeakMap<object, { from: IndexOwner; keys: DeadLetterIndexKeys }>();

export function deadLetterIndexKeys(group: IndexOwner): DeadLetterIndexKeys {
  const cached = known.get(group);
  if (
    cached?.from.stream === group.stream &&
    cached.from.group === group.group &&
    cached.from.deadLetterStream === group.deadLetterStream
  ) {
    return cached.keys;
  }
  const index = sameSlotKey(
    group.deadLetterStream,
    `index:${group.stream.length}:${group.stream}:${group.group}`,
  );
  const keys = {
    index,
    state: sameSlotKey(index, "state"),
    floor: sameSlotKey(group.deadLetterStream, "index-floor"),
  };
  const { stream, group: name, deadLetterStream } = group;
  known.set(group, { from: { stream, group: name, deadLetterStream }, keys });
  return keys;
}
