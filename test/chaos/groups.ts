/**
 * The consumer groups a chaos run drives, one per janitor action, each with the README's own
 * consumer loop. The README's loops name `orders` and `billing`; for the other groups the same
 * loop runs with those two names replaced (nothing else in it changes).
 */
export interface ChaosGroup {
  stream: string;
  group: string;
  action: "requeue" | "dead-letter" | "reassign";
  /** The group's retry lane (requeue), or the lane stream the README loop reads anyway. */
  lane: string;
  deadLetters: string;
  maxDeliveries: number;
  /** The README line after which the loop's ```js block starts. */
  loopAfter: string;
}

const RETRY_LANE_LOOP = "### Retry lanes";

export const CHAOS_GROUPS: readonly ChaosGroup[] = [
  {
    stream: "orders",
    group: "billing",
    action: "requeue",
    lane: "{orders}:billing:retry",
    deadLetters: "{orders}:dead",
    maxDeliveries: 4,
    loopAfter: RETRY_LANE_LOOP,
  },
  {
    stream: "shipments",
    group: "shipping",
    action: "dead-letter",
    lane: "{shipments}:shipping:retry",
    deadLetters: "{shipments}:dead",
    maxDeliveries: 4,
    loopAfter: RETRY_LANE_LOOP,
  },
];

/** Where the harness keeps its history in the Redis under test (never a janitor's key). */
export const HISTORY = {
  produced: "chaos:produced",
  acks: "chaos:acks",
  deliveries: "chaos:deliveries",
  crashes: "chaos:crashes",
} as const;

export const MIN_IDLE_MS = 1000;
