import type { GroupConfig } from "./configTypes.js";
import { hashTag, keySlot, sameSlotKey } from "./keySlot.js";

/** A configured group with its target keys worked out. */
export interface ResolvedGroup extends GroupConfig {
  requeueStream: string;
  deadLetterStream: string;
  /**
   * With `retryLane`: the group's own retry lane (also its requeueStream), swept as part of the
   * group; undefined without.
   */
  retryLaneStream?: string | undefined;
  /**
   * Hash in the source's hash slot where the sweep script records when it last XCLAIMed an entry
   * to each consumer, so that reassign never mistakes the janitor's own claims for a consumer's
   * activity (Redis 7.0 resets a consumer's idle time on XCLAIM). Expires on its own.
   */
  touchesKey: string;
  /** For logs and maps: `stream/group`. */
  id: string;
}

/**
 * The default dead-letter stream lives in the source's hash slot, so that one script can move an
 * entry on Redis Cluster: `orders` hashes whole, and so does the tag of `{orders}:dead`; a source
 * that has a tag already keeps it (`{tenant}.orders` gives `{tenant}.orders:dead`).
 */
export function defaultDeadLetterStream(stream: string): string {
  return keyInSourceSlot(stream, "dead");
}

/**
 * A group's retry lane, named like the default dead-letter stream and in the same hash slot:
 * `{orders}:billing:retry` for `orders`, `{tenant}.orders:billing:retry` for `{tenant}.orders`.
 */
export function defaultRetryLaneStream(stream: string, group: string): string {
  return keyInSourceSlot(stream, `${group}:retry`);
}

/** `<stream>:<suffix>`, with the stream as hash tag when it has none of its own. */
function keyInSourceSlot(stream: string, suffix: string): string {
  if (hashTag(stream) !== undefined) return `${stream}:${suffix}`;
  const candidate = `{${stream}}:${suffix}`;
  // A name with a stray `}` but no tag (`a}b`) cannot be given a tag that hashes like it; such a
  // group is reported by keysOutsideSourceSlot and needs an explicit deadLetterStream on Cluster.
  return keySlot(candidate) === keySlot(stream) ? candidate : `${stream}:${suffix}`;
}

export function resolveGroup(group: GroupConfig): ResolvedGroup {
  const retryLaneStream =
    group.retryLane !== true
      ? undefined
      : group.requeueStream === ""
        ? defaultRetryLaneStream(group.stream, group.group)
        : group.requeueStream;
  return {
    ...group,
    requeueStream:
      retryLaneStream ?? (group.requeueStream === "" ? group.stream : group.requeueStream),
    retryLaneStream,
    deadLetterStream:
      group.deadLetterStream === ""
        ? defaultDeadLetterStream(group.stream)
        : group.deadLetterStream,
    // Internal, so its name may be anything: sameSlotKey keeps it in the slot whatever the name.
    touchesKey: sameSlotKey(group.stream, `janitor-touches:${group.group}`),
    id: `${group.stream}/${group.group}`,
  };
}

/**
 * The counts that copies written into `stream` for `group` carry (x-delivery-count), kept by the
 * sweep script beside the stream so that backoff reads no bodies (src/scripts/lua/sweepPage.lua,
 * "Carried counts"). Internal: sameSlotKey keeps it in the stream's slot whatever the name.
 */
export function carriedCountsKey(stream: string, group: string): string {
  return sameSlotKey(stream, `janitor-carried:${group}`);
}

/** Keys one script touches for this group that would not share a slot on Redis Cluster. */
export function keysOutsideSourceSlot(group: ResolvedGroup): string[] {
  const slot = keySlot(group.stream);
  return [group.requeueStream, group.deadLetterStream, group.touchesKey].filter(
    (key) => keySlot(key) !== slot,
  );
}
