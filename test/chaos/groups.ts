import { sameSlotKey } from "../../src/core/keySlot.js";

/**
 * The consumer groups a chaos run drives, one per janitor action, each with a README consumer
 * loop. The README's loops name `orders` and `billing`; for the other groups the same loop runs
 * with those two names replaced (nothing else in it changes). `orders` is read by two groups, as
 * in the README's retry-lane example: billing requeues through its lane, shipping reassigns.
 */
export interface ChaosGroup {
  stream: string;
  group: string;
  action: "requeue" | "dead-letter" | "reassign";
  /** The group's retry lane (requeue with retryLane: true), if any. */
  lane?: string;
  deadLetters: string;
  maxDeliveries: number;
  /** The README line after which the loop's code block starts. */
  loopAfter: string;
  /** The README has this loop in redis-py too: one consumer of the group runs it. */
  python: boolean;
}

/** The retry-lane loop (source and lane in one XREADGROUP). */
const RETRY_LANE_LOOP = "### Retry lanes";
/** The Concepts loop: its own pending entries first, then new ones. */
const OWN_PEL_LOOP = "A consumer under `reassign` reads its own pending entries first";
const MAX_DELIVERIES = 4;

export const CHAOS_GROUPS: readonly ChaosGroup[] = [
  {
    stream: "orders",
    group: "billing",
    action: "requeue",
    lane: "{orders}:billing:retry",
    deadLetters: "{orders}:dead",
    maxDeliveries: MAX_DELIVERIES,
    loopAfter: RETRY_LANE_LOOP,
    python: true,
  },
  {
    stream: "orders",
    group: "shipping",
    action: "reassign",
    deadLetters: "{orders}:dead",
    maxDeliveries: MAX_DELIVERIES,
    loopAfter: OWN_PEL_LOOP,
    python: false,
  },
  {
    stream: "jobs",
    group: "workers",
    action: "requeue",
    deadLetters: "{jobs}:dead",
    maxDeliveries: MAX_DELIVERIES,
    loopAfter: OWN_PEL_LOOP,
    python: false,
  },
  {
    stream: "shipments",
    group: "couriers",
    action: "dead-letter",
    deadLetters: "{shipments}:dead",
    maxDeliveries: MAX_DELIVERIES,
    loopAfter: OWN_PEL_LOOP,
    python: false,
  },
];

/** The streams producers write to, each once. */
export const SOURCE_STREAMS: readonly string[] = [...new Set(CHAOS_GROUPS.map((g) => g.stream))];

/** The dead-letter streams, each once (a stream's groups share its default one). */
export const DEAD_LETTER_STREAMS: readonly string[] = [
  ...new Set(CHAOS_GROUPS.map((g) => g.deadLetters)),
];

/** Every (stream, group) a consumer reads: the sources and the lanes. */
export const READ_PAIRS: readonly { stream: string; group: string }[] = CHAOS_GROUPS.flatMap((g) =>
  [g.stream, ...(g.lane === undefined ? [] : [g.lane])].map((stream) => ({
    stream,
    group: g.group,
  })),
);

/** What the harness records in the Redis under test (never a janitor's key), by kind. */
export type HistoryKind = "produced" | "acks" | "deliveries" | "stalls" | "purged" | "redriven";

/**
 * Where the harness keeps one kind of history of a source stream's groups: in the stream's hash
 * slot (`{orders}:chaos:acks`), so that on Redis Cluster the script that acknowledges an entry and
 * logs it, and the one that produces it, touch keys of one slot. Kinds:
 * - produced: hash, key -> "stream id";
 * - acks, deliveries: lists (jsPrelude.ts says what a record holds);
 * - stalls: keys a consumer held when it crashed, or while it stalled past minIdleMs;
 * - purged, redriven: "key group dead-letter-id ms" per dead letter the operator purged, or
 *   redrove (operator.ts).
 */
export function historyKey(stream: string, kind: HistoryKind): string {
  return sameSlotKey(stream, `chaos:${kind}`);
}

export const MIN_IDLE_MS = 1000;
