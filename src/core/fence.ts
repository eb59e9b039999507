import { sameSlotKey } from "./keySlot.js";

/**
 * What mutating scripts check before they change anything. On one server (and under Sentinel)
 * the lease itself: `GET key == value`. On Redis Cluster a script can only read keys of its own
 * hash slot, and the lease key lives in another one, so `slotToken` is set instead and each
 * script checks and raises a fence in its stream's slot (fenceArguments below).
 */
export interface Fence {
  /** The lease key. */
  readonly key: string;
  /** The lease value of this term. */
  readonly value: string;
  /** Redis Cluster: this term's fencing token, checked per slot instead of the lease value. */
  readonly slotToken?: number;
}

/**
 * Companion keys must live in the lease key's hash slot (a script touching keys of several slots
 * fails with CROSSSLOT on Redis Cluster): see sameSlotKey.
 */
export function companionKey(leaseKey: string, suffix: string): string {
  return sameSlotKey(leaseKey, suffix);
}

/** Marks a fence argument as a fencing token to compare, not a lease value to match. */
export const SLOT_TOKEN_PREFIX = "token:";

/**
 * The fence key of one stream on Redis Cluster: in the stream's hash slot (so a page script may
 * read it), named after the lease key (so two deployments with different leases never share it).
 * It holds the highest fencing token that has written to that slot's streams through it.
 */
export function slotFenceKey(stream: string, leaseKey: string): string {
  return sameSlotKey(stream, `${leaseKey}:fence`);
}

/**
 * The fence key and argument a mutating script of `stream` is given.
 *
 * One server or Sentinel: the lease key and our lease value; the script writes only while the
 * lease holds our value, which makes any write by a stale leader impossible.
 *
 * Redis Cluster: the script cannot read the lease key (another slot), so each stream has a fence
 * key in its own slot, holding the highest fencing token (INCR at every acquisition of the lease)
 * that wrote there. The script refuses (FENCED) when our token is lower and raises the fence to
 * our token otherwise, atomically with the page. Hence a leader frozen past its TTL can no longer
 * write to a stream once a newer leader has swept it, and since a page is one script, two leaders
 * never interleave inside a page. What it cannot stop is a stale leader writing to a stream the
 * new leader has not reached yet: that write is a page like any other (atomic, idempotent), and
 * its entries cannot be handled twice because they leave the PEL in the same script.
 */
export function fenceArguments(fence: Fence, stream: string): { key: string; value: string } {
  if (fence.slotToken === undefined) return { key: fence.key, value: fence.value };
  return {
    key: slotFenceKey(stream, fence.key),
    value: `${SLOT_TOKEN_PREFIX}${fence.slotToken}`,
  };
}
